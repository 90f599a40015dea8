//! [`Window`]: a compact body read a window at a time, so that the
//! direct reader ([`super::direct`]) decodes a plan file as it reads it,
//! with no buffer of the file's size.

use std::io::Read;

use super::UINT;
use super::read::varint_at;

/// The bytes a window holds at once unless a value needs more: small
/// enough to stay in the CPU's cache between the read that fills it and
/// the decoding.
pub(super) const WINDOW: usize = 128 << 10;

/// The part of a body read so far and not yet decoded (`buf[at..]`), and
/// the source of the rest.
pub(super) struct Window<'r> {
    /// Read and not yet dropped: `buf[at..]` is still to be decoded.
    pub(super) buf: Vec<u8>,
    pub(super) at: usize,
    /// The bytes a refill reads at least (more when a value needs more).
    size: usize,
    src: &'r mut dyn Read,
    /// The body's bytes not yet read from `src`.
    unread: u64,
}

impl<'r> Window<'r> {
    /// A window of `size` bytes over a body of `len` bytes that `src`
    /// gives.
    pub(super) fn new(src: &'r mut dyn Read, len: u64, size: usize) -> Self {
        Window {
            buf: Vec::new(),
            at: 0,
            size: size.max(1),
            src,
            unread: len,
        }
    }

    /// The body's bytes after `at`: in the window and still unread.
    #[inline]
    pub(super) fn left(&self) -> u64 {
        (self.buf.len() - self.at) as u64 + self.unread
    }

    /// True when every byte of the body was read and decoded.
    pub(super) fn done(&self) -> bool {
        self.unread == 0 && self.at == self.buf.len()
    }

    /// Makes `buf[at..]` hold at least `n` bytes (and up to the window's
    /// size), reading on from the source: false when the body (or the
    /// source, cut short or failing) ends first.
    #[cold]
    #[inline(never)]
    pub(super) fn fill(&mut self, n: usize) -> bool {
        let have = self.buf.len() - self.at;
        if n as u64 > have as u64 + self.unread {
            return false;
        }
        self.buf.drain(..self.at);
        self.at = 0;
        let want = n.max(self.size) as u64;
        let more = want.saturating_sub(have as u64).min(self.unread) as usize;
        let old = self.buf.len();
        self.buf.resize(old + more, 0);
        let mut got = 0;
        while got < more {
            match self.src.read(&mut self.buf[old + got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.buf.truncate(old + got);
        self.unread -= got as u64;
        self.buf.len() >= n
    }

    /// `n` bytes from `at`, reading on when the window holds fewer.
    #[inline]
    pub(super) fn get(&mut self, n: usize) -> Option<&[u8]> {
        if self.buf.len() - self.at < n && !self.fill(n) {
            return None;
        }
        self.buf.get(self.at..self.at + n)
    }

    /// Reads a value with `read` from the window's bytes (which must not
    /// depend on bytes it was not given): with more bytes each time it
    /// fails, until it succeeds, or fails with the whole rest of the body
    /// in the window. `read` answers the value and the bytes it took.
    pub(super) fn with<T>(
        &mut self,
        mut read: impl FnMut(&[u8]) -> Option<(T, usize)>,
    ) -> Option<T> {
        loop {
            if let Some((v, took)) = read(&self.buf[self.at..]) {
                self.at += took;
                return Some(v);
            }
            let have = self.buf.len() - self.at;
            if self.unread == 0 {
                return None;
            }
            let more = (have.max(self.size) as u64 * 2).min(have as u64 + self.unread);
            if !self.fill(more as usize) {
                return None;
            }
        }
    }

    /// The next byte.
    #[inline]
    pub(super) fn peek(&mut self) -> Option<u8> {
        match self.buf.get(self.at) {
            Some(&b) => Some(b),
            None => self.get(1).map(|b| b[0]),
        }
    }

    /// Takes the next byte when it is `tag`.
    #[inline]
    pub(super) fn tag(&mut self, tag: u8) -> Option<()> {
        (self.peek()? == tag).then(|| self.at += 1)
    }

    /// A LEB128 varint, as [`varint_at`] reads it.
    #[inline]
    pub(super) fn varint(&mut self) -> Option<u64> {
        // Most numbers and every field name's string index fit one byte,
        // most other string indices two or three: read at once, as
        // `varint_at` would, when the window holds three bytes.
        if let Some(&[b0, b1, b2]) = self.buf.get(self.at..self.at + 3) {
            let low = |b: u8| u64::from(b & 0x7F);
            if b0 < 0x80 {
                self.at += 1;
                return Some(u64::from(b0));
            }
            if b1 < 0x80 {
                self.at += 2;
                return Some(low(b0) | u64::from(b1) << 7);
            }
            if b2 < 0x80 {
                self.at += 3;
                return Some(low(b0) | low(b1) << 7 | u64::from(b2) << 14);
            }
        }
        self.long_varint()
    }

    fn long_varint(&mut self) -> Option<u64> {
        // A varint takes at most 10 bytes: have them, or the rest.
        if self.buf.len() - self.at < 10 {
            let n = self.left().min(10) as usize;
            self.get(n)?;
        }
        let mut at = self.at;
        let v = varint_at(&self.buf, &mut at).ok()?;
        self.at = at;
        Some(v)
    }

    /// An unsigned integer's value (its tag and varint).
    #[inline]
    pub(super) fn uint(&mut self) -> Option<u64> {
        // Most numbers (ports, indices, speeds below 128) are one byte.
        if let Some(&[UINT, b]) = self.buf.get(self.at..self.at + 2)
            && b < 0x80
        {
            self.at += 2;
            return Some(u64::from(b));
        }
        self.tag(UINT)?;
        self.varint()
    }

    /// A sequence's or map's 4-byte count, when the bytes left can hold
    /// as many items (a byte each at least).
    #[inline]
    pub(super) fn count(&mut self) -> Option<usize> {
        let b = self.get(4)?;
        let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        self.at += 4;
        (u64::from(n) <= self.left()).then_some(n as usize)
    }
}
