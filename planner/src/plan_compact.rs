//! The compact plan: the plan's values in binary, every string once in a
//! table, read in milliseconds where the JSON of a 131,072-sub-node plan
//! (80 MB) takes a third of a second to parse.
//!
//! It is the JSON plan's data model, not a second schema: serde writes and
//! reads it with the same derives as the JSON, so every field the plan has
//! (today's and those added later) is carried, and JSON -> compact -> JSON
//! gives the same bytes (the round-trip tests hold that for every bundled
//! plan and every topology). A file is:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | the signature `89 70 6c 61 6e 0d 0a 1a` (`\x89plan\r\n\x1a`): a first byte that is not text, so no text file starts so; the CR LF and the end-of-file byte (Ctrl-Z) catch a copy that converted line ends or stopped there |
//! | 4 | the compact encoding's version, little-endian ([`COMPACT_VERSION`]) |
//! | 8 | the body's length in bytes, little-endian |
//! | 8 | the body's checksum ([`checksum`]), little-endian |
//! | rest | the body: the string count (a LEB128 varint), each string as its length (varint) and UTF-8 bytes, then the plan as one value |
//!
//! A value is a tag byte and its content: 0 null (a `None` the plan
//! writes), 1 false, 2 true, 3 an unsigned integer (varint), 4 a negative
//! integer (zigzag varint), 5 a float (8 bytes, little-endian IEEE 754
//! bits, so it reads back exactly), 6 a string (its index in the table,
//! varint), 7 a sequence and 8 a map (a 4-byte little-endian count, then
//! the items, a map's as key and value). Keys are strings of the table
//! too, so a field name costs one byte.
//!
//! Reading fills the plan straight from the body ([`direct`]): each list
//! decoded in one loop into a vector of its exact length, each table entry
//! a plan keeps as a [`crate::plan::Name`] made once and shared by every
//! use of the entry. A body not in the plain form the writer makes (a
//! damaged file, or a form only serde takes) is read by serde's derived
//! `Deserialize` instead ([`read::Reader`]), which decides and words every
//! refusal. The planner's commands decode a plan file as they read it, a
//! window at a time, with its checksum taken on the way
//! ([`read_streamed`]); a file that reading so gives up on is read whole.
//!
//! A truncated or corrupt file is refused naming the file, the byte offset
//! and the field being read (`sub_node_list[17].port`), never with a
//! panic: the checksum catches changed bytes, the length a cut file, and
//! the reader checks every count against the bytes left and nests at most
//! [`crate::input::MAX_NESTING`] levels.

use serde::Deserialize as _;
use serde::ser::Serialize;

use crate::error::{Error, Problem, Result};
use crate::plan::Plan;

/// The first eight bytes of a compact plan.
pub const SIGNATURE: [u8; 8] = *b"\x89plan\r\n\x1a";

/// The version of the compact encoding this planner writes and reads (the
/// plan inside has its own `format_version`).
pub const COMPACT_VERSION: u32 = 1;

/// Signature, version, body length and checksum.
const HEADER: usize = 8 + 4 + 8 + 8;

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const UINT: u8 = 3;
const NEG: u8 = 4;
const FLOAT: u8 = 5;
const STR: u8 = 6;
const SEQ: u8 = 7;
const MAP: u8 = 8;

/// True when `bytes` begin as a compact plan does.
pub fn is_compact(bytes: &[u8]) -> bool {
    bytes.starts_with(&SIGNATURE)
}

/// The checksum of a compact plan's body: 64-bit words (the last one
/// zero-padded) folded by xor, a multiply by an odd constant and a
/// rotation, then the length mixed in, finished as MurmurHash3's `fmix64`.
/// Every changed byte changes it with near certainty, at about a byte per
/// cycle (a plan of 20 MB in milliseconds); it guards against damage, not
/// against someone who means to forge a plan.
pub fn checksum(body: &[u8]) -> u64 {
    let mut sum = Checksum::default();
    sum.add(body);
    sum.finish()
}

/// [`checksum`] taken over a body given in pieces, as it is read.
#[derive(Clone, Debug)]
struct Checksum {
    h: u64,
    len: u64,
    /// The bytes of a word not yet complete (`part[..parts]`).
    part: [u8; 8],
    parts: usize,
}

impl Default for Checksum {
    fn default() -> Self {
        Checksum {
            h: 0x243F_6A88_85A3_08D3,
            len: 0,
            part: [0; 8],
            parts: 0,
        }
    }
}

impl Checksum {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;

    #[inline]
    fn word(&mut self, w: [u8; 8]) {
        self.h = (self.h ^ u64::from_le_bytes(w))
            .wrapping_mul(Self::K)
            .rotate_left(29);
    }

    /// The next bytes of the body.
    fn add(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.parts > 0 {
            let take = (8 - self.parts).min(bytes.len());
            self.part[self.parts..self.parts + take].copy_from_slice(&bytes[..take]);
            self.parts += take;
            bytes = &bytes[take..];
            if self.parts < 8 {
                return;
            }
            self.word(self.part);
            self.parts = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.word([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        }
        let rest = words.remainder();
        self.part[..rest.len()].copy_from_slice(rest);
        self.parts = rest.len();
    }

    /// The checksum of the bytes given: the last word zero-padded, the
    /// length mixed in, finished as MurmurHash3's `fmix64`.
    fn finish(&self) -> u64 {
        let mut sum = self.clone();
        if sum.parts > 0 {
            let mut last = [0u8; 8];
            last[..sum.parts].copy_from_slice(&sum.part[..sum.parts]);
            sum.word(last);
        }
        let mut h = sum.h ^ sum.len;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// A plan file's body as it is read, with its [`Checksum`].
struct Summed {
    file: std::fs::File,
    sum: Checksum,
}

impl std::io::Read for Summed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.sum.add(&buf[..n]);
        Ok(n)
    }
}

/// Reads the compact plan file `path` (named `file` in errors) as it is
/// read, a window at a time ([`direct`]), with no buffer of the file's
/// size: `None` when it cannot be read so (not a compact plan of this
/// encoding, not a regular file within [`crate::input::MAX_INPUT_BYTES`],
/// a body not in the plain form the writer makes, cut, changed or
/// failing to read), and the caller then reads the file whole ([`read`],
/// [`Plan::from_file`]), which gives every refusal its words. A plan read
/// here is the plan [`Plan::from_file`] reads (the tests hold that).
pub fn read_streamed(path: &std::path::Path, file: &str) -> Option<Result<Plan>> {
    use std::io::Read as _;
    let regular = |m: &std::fs::Metadata| {
        m.is_file() && m.len() <= crate::input::MAX_INPUT_BYTES && m.len() >= HEADER as u64
    };
    // Look before opening, as `input::read_bytes` does: opening a FIFO
    // for reading waits for a writer.
    let meta = std::fs::metadata(path).ok().filter(regular)?;
    let mut f = std::fs::File::open(path).ok()?;
    let opened = f.metadata().ok().filter(regular)?;
    let mut header = [0u8; HEADER];
    f.read_exact(&mut header).ok()?;
    let word = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().unwrap_or([0; 8]));
    let version = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    let len = opened.len() - HEADER as u64;
    if !is_compact(&header)
        || version != COMPACT_VERSION
        || word(12) != len
        || meta.len() != opened.len()
    {
        return None;
    }
    let mut body = Summed {
        file: f,
        sum: Checksum::default(),
    };
    let plan = direct::plan(&mut body, len, WINDOW)?;
    // Nothing after the body, and the body the header's checksum says.
    let mut after = [0u8; 1];
    if body.file.read(&mut after).ok()? != 0 || body.sum.finish() != word(20) {
        return None;
    }
    Some(plan.check_version(file).map(|()| plan))
}

/// A plan file as read: a compact plan (its signature first, whatever
/// the file's name) or text, JSON or TOML ([`Plan::parse`]).
#[derive(Debug)]
pub enum PlanFile {
    /// The compact plan's bytes.
    Compact(Vec<u8>),
    /// The JSON or TOML text.
    Text(String),
}

/// Reads the plan file `path` within [`crate::input::read_bytes`]'s
/// limits, compact or text; the error names the file. Both binaries read
/// plans here, so every command takes either form.
pub fn read(path: &std::path::Path) -> std::result::Result<PlanFile, String> {
    let bytes = crate::input::read_bytes(path)?;
    if is_compact(&bytes) {
        return Ok(PlanFile::Compact(bytes));
    }
    crate::input::text(bytes, &path.display().to_string()).map(PlanFile::Text)
}

impl PlanFile {
    /// The file's bytes, as read (what a digest of the plan covers).
    pub fn bytes(&self) -> &[u8] {
        match self {
            PlanFile::Compact(bytes) => bytes,
            PlanFile::Text(text) => text.as_bytes(),
        }
    }
}

impl Plan {
    /// The plan in `contents`, read from `file` (the name errors give).
    pub fn from_file(contents: &PlanFile, file: &str) -> Result<Plan> {
        match contents {
            PlanFile::Compact(bytes) => Plan::from_compact(bytes, file),
            PlanFile::Text(text) => Plan::parse(text, file),
        }
    }

    /// The plan as a compact plan (see the module documentation).
    pub fn to_compact(&self) -> Result<Vec<u8>> {
        let mut w = Writer::default();
        self.serialize(&mut w)
            .map_err(|e| Error::serialize("the compact plan", e))?;
        let mut body = Vec::with_capacity(w.table_bytes + 10 * w.strings.len() + w.out.len() + 10);
        varint(&mut body, w.strings.len() as u64);
        for s in &w.strings {
            varint(&mut body, s.len() as u64);
            body.extend_from_slice(s.as_bytes());
        }
        body.extend_from_slice(&w.out);
        let mut file = Vec::with_capacity(HEADER + body.len());
        file.extend_from_slice(&SIGNATURE);
        file.extend_from_slice(&COMPACT_VERSION.to_le_bytes());
        file.extend_from_slice(&(body.len() as u64).to_le_bytes());
        file.extend_from_slice(&checksum(&body).to_le_bytes());
        file.extend_from_slice(&body);
        Ok(file)
    }

    /// Reads a compact plan; `file` is the path the user gave, which
    /// errors name with the byte offset and the field.
    pub fn from_compact(bytes: &[u8], file: &str) -> Result<Plan> {
        let refuse = |at: usize, field: &str, message: String, fix: &str| Error::Invalid {
            file: file.to_string(),
            what: "compact plan",
            problems: vec![Problem::at(
                None,
                if field.is_empty() {
                    format!("byte {at}")
                } else {
                    format!("byte {at} ({field})")
                },
                message,
                fix,
            )],
        };
        let again = "write the plan again (planner design ... --out plan.cplan), or give its JSON";
        if !is_compact(bytes) {
            return Err(refuse(
                0,
                "",
                "it does not begin with the compact plan's signature".to_string(),
                "give a plan that planner design wrote",
            ));
        }
        if bytes.len() < HEADER {
            return Err(refuse(
                bytes.len(),
                "header",
                format!(
                    "the file ends inside the {HEADER}-byte header (it has {} bytes)",
                    bytes.len()
                ),
                again,
            ));
        }
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != COMPACT_VERSION {
            return Err(refuse(
                8,
                "version",
                format!(
                    "the compact plan is encoding {version}, this planner reads encoding {COMPACT_VERSION}"
                ),
                "write the plan again with this planner, or give its JSON",
            ));
        }
        let body = &bytes[HEADER..];
        let length = word(12);
        if length != body.len() as u64 {
            return Err(refuse(
                12,
                "length",
                format!(
                    "the header says the body has {length} bytes, the file has {} after the header: the file is cut or has bytes added",
                    body.len()
                ),
                again,
            ));
        }
        let sum = word(20);
        if sum != checksum(body) {
            return Err(refuse(
                20,
                "checksum",
                format!(
                    "the body's checksum is {:016x}, the header says {sum:016x}: the file was changed after it was written",
                    checksum(body)
                ),
                again,
            ));
        }
        let decoded = decode(body, Decoder::Direct);
        let plan = decoded.map_err(|f| {
            let field = field_at(body, f.at);
            refuse(HEADER + f.at, &field, f.message, again)
        })?;
        plan.check_version(file)?;
        Ok(plan)
    }
}

/// How [`decode`] reads a body's plan value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Decoder {
    /// [`direct::plan`], and serde where it gives up.
    Direct,
    /// Serde's derived `Deserialize` only: the reference the tests hold
    /// the direct reader to.
    #[cfg(test)]
    Serde,
}

/// The plan of a compact body (after the header): the string table, then
/// the plan's value and nothing after it.
fn decode(body: &[u8], how: Decoder) -> read::Read<Plan> {
    if how == Decoder::Direct
        && let Some(plan) = direct::plan(&mut &body[..], body.len() as u64, WINDOW)
    {
        return Ok(plan);
    }
    let mut r = Reader {
        bytes: body,
        at: 0,
        strings: Cow::Borrowed(&[]),
        depth: 0,
    };
    r.strings()?;
    // Not the plain form: serde decides, and words any refusal.
    let entries = r.strings.len();
    let plan = crate::plan::interned_table(entries, || Plan::deserialize(&mut r))?;
    if r.at != body.len() {
        return Err(Fault::at(r.at, "bytes follow the plan's value"));
    }
    Ok(plan)
}

mod direct;
mod read;
mod window;
mod write;

use std::borrow::Cow;

use read::{Fault, Reader, field_at};
use window::WINDOW;
use write::{Writer, varint};

#[cfg(test)]
mod direct_tests;
#[cfg(test)]
mod tests;
