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
//! A truncated or corrupt file is refused naming the file, the byte offset
//! and the field being read (`sub_node_list[17].port`), never with a
//! panic: the checksum catches changed bytes, the length a cut file, and
//! the reader checks every count against the bytes left and nests at most
//! [`crate::input::MAX_NESTING`] levels.

use serde::Deserialize as _;
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::ser::{self, Serialize};

use crate::error::{Error, Problem, Result};
use crate::input::MAX_NESTING;
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
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = 0x243F_6A88_85A3_08D3u64;
    let mut words = body.chunks_exact(8);
    for w in &mut words {
        let v = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        h = (h ^ v).wrapping_mul(K).rotate_left(29);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        last[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(last))
            .wrapping_mul(K)
            .rotate_left(29);
    }
    h ^= body.len() as u64;
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
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
        let mut r = Reader {
            bytes: body,
            at: 0,
            strings: Vec::new(),
            depth: 0,
        };
        let decoded = r.strings().and_then(|()| {
            let plan = Plan::deserialize(&mut r)?;
            if r.at != body.len() {
                return Err(Fault::at(r.at, "bytes follow the plan's value"));
            }
            Ok(plan)
        });
        let plan = decoded.map_err(|f| {
            let field = field_at(body, f.at);
            refuse(HEADER + f.at, &field, f.message, again)
        })?;
        plan.check_version(file)?;
        Ok(plan)
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The serde serializer of the compact plan: the values into `out`, the
/// strings into the table.
#[derive(Default)]
struct Writer {
    out: Vec<u8>,
    strings: Vec<String>,
    index: rustc_hash::FxHashMap<String, u32>,
    table_bytes: usize,
}

/// An error of the writer (a value the encoding has no form for).
#[derive(Debug)]
struct WriteError(String);

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WriteError {}

impl ser::Error for WriteError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        WriteError(msg.to_string())
    }
}

impl Writer {
    fn string(&mut self, s: &str) {
        let i = match self.index.get(s) {
            Some(&i) => i,
            None => {
                let i = self.strings.len() as u32;
                self.strings.push(s.to_string());
                self.index.insert(s.to_string(), i);
                self.table_bytes += s.len();
                i
            }
        };
        self.out.push(STR);
        varint(&mut self.out, u64::from(i));
    }

    fn uint(&mut self, v: u64) {
        self.out.push(UINT);
        varint(&mut self.out, v);
    }

    fn int(&mut self, v: i64) {
        if v >= 0 {
            self.uint(v as u64);
        } else {
            self.out.push(NEG);
            varint(&mut self.out, ((v << 1) ^ (v >> 63)) as u64);
        }
    }

    /// Opens a sequence or map: its tag and a count filled in by
    /// [`Container::end`].
    fn open(&mut self, tag: u8) -> Container<'_> {
        self.out.push(tag);
        let at = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        Container {
            w: self,
            at,
            count: 0,
        }
    }
}

/// An open sequence or map of [`Writer`].
struct Container<'a> {
    w: &'a mut Writer,
    at: usize,
    count: u32,
}

impl Container<'_> {
    fn item<T: ?Sized + Serialize>(&mut self, v: &T) -> std::result::Result<(), WriteError> {
        self.count += 1;
        v.serialize(&mut *self.w)
    }

    fn end(self) -> std::result::Result<(), WriteError> {
        self.w.out[self.at..self.at + 4].copy_from_slice(&self.count.to_le_bytes());
        Ok(())
    }
}

macro_rules! unsigned {
    ($($name:ident($t:ty)),*) => {
        $(fn $name(self, v: $t) -> std::result::Result<(), WriteError> {
            self.uint(u64::from(v));
            Ok(())
        })*
    };
}

macro_rules! signed {
    ($($name:ident($t:ty)),*) => {
        $(fn $name(self, v: $t) -> std::result::Result<(), WriteError> {
            self.int(i64::from(v));
            Ok(())
        })*
    };
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = WriteError;
    type SerializeSeq = Container<'a>;
    type SerializeTuple = Container<'a>;
    type SerializeTupleStruct = Container<'a>;
    type SerializeTupleVariant = Variant<'a>;
    type SerializeMap = Container<'a>;
    type SerializeStruct = Container<'a>;
    type SerializeStructVariant = Variant<'a>;

    unsigned!(
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64)
    );
    signed!(
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64)
    );

    fn serialize_bool(self, v: bool) -> std::result::Result<(), WriteError> {
        self.out.push(if v { TRUE } else { FALSE });
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> std::result::Result<(), WriteError> {
        self.serialize_f64(f64::from(v))
    }

    fn serialize_f64(self, v: f64) -> std::result::Result<(), WriteError> {
        self.out.push(FLOAT);
        self.out.extend_from_slice(&v.to_bits().to_le_bytes());
        Ok(())
    }

    fn serialize_char(self, v: char) -> std::result::Result<(), WriteError> {
        self.string(v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> std::result::Result<(), WriteError> {
        self.string(v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> std::result::Result<(), WriteError> {
        let mut c = self.open(SEQ);
        for b in v {
            c.item(b)?;
        }
        c.end()
    }

    fn serialize_none(self) -> std::result::Result<(), WriteError> {
        self.out.push(NULL);
        Ok(())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, v: &T) -> std::result::Result<(), WriteError> {
        v.serialize(self)
    }

    fn serialize_unit(self) -> std::result::Result<(), WriteError> {
        self.out.push(NULL);
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> std::result::Result<(), WriteError> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> std::result::Result<(), WriteError> {
        self.string(variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        v: &T,
    ) -> std::result::Result<(), WriteError> {
        v.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> std::result::Result<(), WriteError> {
        let mut c = self.open(MAP);
        c.item(variant)?;
        v.serialize(&mut *c.w)?;
        c.end()
    }

    fn serialize_seq(self, _: Option<usize>) -> std::result::Result<Container<'a>, WriteError> {
        Ok(self.open(SEQ))
    }

    fn serialize_tuple(self, _: usize) -> std::result::Result<Container<'a>, WriteError> {
        Ok(self.open(SEQ))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> std::result::Result<Container<'a>, WriteError> {
        Ok(self.open(SEQ))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> std::result::Result<Variant<'a>, WriteError> {
        Variant::open(self, variant, SEQ)
    }

    fn serialize_map(self, _: Option<usize>) -> std::result::Result<Container<'a>, WriteError> {
        Ok(self.open(MAP))
    }

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> std::result::Result<Container<'a>, WriteError> {
        Ok(self.open(MAP))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> std::result::Result<Variant<'a>, WriteError> {
        Variant::open(self, variant, MAP)
    }
}

/// The sequences of serde's data model: every element an item.
macro_rules! sequence {
    ($($trait:ident::$method:ident),*) => {
        $(impl ser::$trait for Container<'_> {
            type Ok = ();
            type Error = WriteError;

            fn $method<T: ?Sized + Serialize>(
                &mut self,
                v: &T,
            ) -> std::result::Result<(), WriteError> {
                self.item(v)
            }

            fn end(self) -> std::result::Result<(), WriteError> {
                Container::end(self)
            }
        })*
    };
}

sequence!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field
);

impl ser::SerializeMap for Container<'_> {
    type Ok = ();
    type Error = WriteError;

    fn serialize_key<T: ?Sized + Serialize>(
        &mut self,
        k: &T,
    ) -> std::result::Result<(), WriteError> {
        self.item(k)
    }

    fn serialize_value<T: ?Sized + Serialize>(
        &mut self,
        v: &T,
    ) -> std::result::Result<(), WriteError> {
        v.serialize(&mut *self.w)
    }

    fn end(self) -> std::result::Result<(), WriteError> {
        Container::end(self)
    }
}

impl ser::SerializeStruct for Container<'_> {
    type Ok = ();
    type Error = WriteError;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> std::result::Result<(), WriteError> {
        self.item(key)?;
        v.serialize(&mut *self.w)
    }

    fn end(self) -> std::result::Result<(), WriteError> {
        Container::end(self)
    }
}

/// A tuple or struct variant: a map of one entry, the variant's name to
/// its fields (as JSON writes it).
struct Variant<'a> {
    inner: Container<'a>,
}

impl<'a> Variant<'a> {
    fn open(w: &'a mut Writer, variant: &str, tag: u8) -> std::result::Result<Self, WriteError> {
        w.out.push(MAP);
        w.out.extend_from_slice(&1u32.to_le_bytes());
        w.string(variant);
        Ok(Variant { inner: w.open(tag) })
    }

    fn finish(self) -> std::result::Result<(), WriteError> {
        self.inner.end()
    }
}

impl ser::SerializeTupleVariant for Variant<'_> {
    type Ok = ();
    type Error = WriteError;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        v: &T,
    ) -> std::result::Result<(), WriteError> {
        self.inner.item(v)
    }

    fn end(self) -> std::result::Result<(), WriteError> {
        self.finish()
    }
}

impl ser::SerializeStructVariant for Variant<'_> {
    type Ok = ();
    type Error = WriteError;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> std::result::Result<(), WriteError> {
        self.inner.item(key)?;
        v.serialize(&mut *self.inner.w)
    }

    fn end(self) -> std::result::Result<(), WriteError> {
        self.finish()
    }
}

/// Why a compact body cannot be read: the offset in the body and what is
/// wrong there.
#[derive(Debug)]
struct Fault {
    at: usize,
    message: String,
}

impl Fault {
    fn at(at: usize, message: impl Into<String>) -> Self {
        Fault {
            at,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fault {}

impl de::Error for Fault {
    /// A complaint of the plan's types (a missing field, a number out of
    /// range); [`Reader`] sets the offset where it was raised.
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Fault {
            at: usize::MAX,
            message: msg.to_string(),
        }
    }
}

/// The serde deserializer of a compact body.
struct Reader<'de> {
    bytes: &'de [u8],
    at: usize,
    strings: Vec<&'de str>,
    depth: usize,
}

type Read<T> = std::result::Result<T, Fault>;

impl<'de> Reader<'de> {
    fn byte(&mut self) -> Read<u8> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| Fault::at(self.at, "the file ends inside a value"))?;
        self.at += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Read<u64> {
        let start = self.at;
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                if shift == 63 && b > 1 {
                    break;
                }
                return Ok(v);
            }
        }
        Err(Fault::at(start, "a number is longer than 64 bits"))
    }

    fn count(&mut self) -> Read<usize> {
        let start = self.at;
        let Some(b) = self.bytes.get(self.at..self.at + 4) else {
            return Err(Fault::at(start, "the file ends inside a count"));
        };
        self.at += 4;
        let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize;
        // Every item takes a byte at least.
        if n > self.bytes.len() - self.at {
            return Err(Fault::at(
                start,
                format!(
                    "a count of {n} items is more than the {} bytes left",
                    self.bytes.len() - self.at
                ),
            ));
        }
        Ok(n)
    }

    fn strings(&mut self) -> Read<()> {
        let n = self.varint()?;
        if n > (self.bytes.len() - self.at) as u64 {
            return Err(Fault::at(
                0,
                format!("a table of {n} strings is more than the bytes left"),
            ));
        }
        self.strings.reserve(n as usize);
        for i in 0..n {
            let start = self.at;
            let len = self.varint()?;
            let end = usize::try_from(len)
                .ok()
                .and_then(|l| self.at.checked_add(l))
                .filter(|&e| e <= self.bytes.len())
                .ok_or_else(|| {
                    Fault::at(start, format!("string {i} of the table runs past the end"))
                })?;
            let s = std::str::from_utf8(&self.bytes[self.at..end]).map_err(|e| {
                Fault::at(
                    self.at + e.valid_up_to(),
                    format!("string {i} of the table is not UTF-8"),
                )
            })?;
            self.strings.push(s);
            self.at = end;
        }
        Ok(())
    }

    fn string(&mut self, start: usize) -> Read<&'de str> {
        let i = self.varint()?;
        usize::try_from(i)
            .ok()
            .and_then(|i| self.strings.get(i).copied())
            .ok_or_else(|| {
                Fault::at(
                    start,
                    format!(
                        "string {i} is not in the table of {} strings",
                        self.strings.len()
                    ),
                )
            })
    }

    /// Runs `f` one level deeper, refusing more than [`MAX_NESTING`].
    fn nested<T>(&mut self, start: usize, f: impl FnOnce(&mut Self) -> Read<T>) -> Read<T> {
        if self.depth == MAX_NESTING {
            return Err(Fault::at(
                start,
                format!("values are nested more than {MAX_NESTING} levels deep"),
            ));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Gives a complaint of the plan's types the offset of the value it
    /// was about.
    fn placed<T>(&self, start: usize, r: Read<T>) -> Read<T> {
        r.map_err(|mut f| {
            if f.at == usize::MAX {
                f.at = start;
            }
            f
        })
    }
}

impl<'de> de::Deserializer<'de> for &mut Reader<'de> {
    type Error = Fault;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        let start = self.at;
        let tag = self.byte()?;
        let r = match tag {
            NULL => visitor.visit_unit(),
            FALSE => visitor.visit_bool(false),
            TRUE => visitor.visit_bool(true),
            UINT => {
                let v = self.varint()?;
                visitor.visit_u64(v)
            }
            NEG => {
                let z = self.varint()?;
                visitor.visit_i64(((z >> 1) as i64) ^ -((z & 1) as i64))
            }
            FLOAT => {
                let Some(b) = self.bytes.get(self.at..self.at + 8) else {
                    return Err(Fault::at(start, "the file ends inside a number"));
                };
                self.at += 8;
                let mut w = [0u8; 8];
                w.copy_from_slice(b);
                visitor.visit_f64(f64::from_bits(u64::from_le_bytes(w)))
            }
            STR => {
                let s = self.string(start)?;
                visitor.visit_borrowed_str(s)
            }
            SEQ => {
                let left = self.count()?;
                self.nested(start, |r| visitor.visit_seq(Items { r: &mut *r, left }))
            }
            MAP => {
                let left = self.count()?;
                self.nested(start, |r| visitor.visit_map(Items { r: &mut *r, left }))
            }
            t => Err(Fault::at(start, format!("byte {t} is not a value's tag"))),
        };
        self.placed(start, r)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        if self.bytes.get(self.at) == Some(&NULL) {
            self.at += 1;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Read<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Read<V::Value> {
        let start = self.at;
        let r = match self.bytes.get(self.at) {
            Some(&STR) => {
                self.at += 1;
                let s = self.string(start)?;
                visitor.visit_enum(s.into_deserializer())
            }
            Some(&MAP) => {
                self.at += 1;
                let n = self.count()?;
                if n != 1 {
                    return Err(Fault::at(
                        start,
                        format!("an enum variant is a map of one entry, not {n}"),
                    ));
                }
                self.nested(start, |r| visitor.visit_enum(r))
            }
            _ => self.deserialize_any(visitor),
        };
        self.placed(start, r)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// The items left of a sequence or map.
struct Items<'a, 'de> {
    r: &'a mut Reader<'de>,
    left: usize,
}

impl<'de> de::SeqAccess<'de> for Items<'_, 'de> {
    type Error = Fault;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Read<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.r).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl<'de> de::MapAccess<'de> for Items<'_, 'de> {
    type Error = Fault;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Read<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(&mut *self.r).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Read<V::Value> {
        seed.deserialize(&mut *self.r)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

impl<'de> de::EnumAccess<'de> for &mut Reader<'de> {
    type Error = Fault;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Read<(V::Value, Self)> {
        let v = seed.deserialize(&mut *self)?;
        Ok((v, self))
    }
}

impl<'de> de::VariantAccess<'de> for &mut Reader<'de> {
    type Error = Fault;

    fn unit_variant(self) -> Read<()> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Read<T::Value> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, visitor: V) -> Read<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        visitor: V,
    ) -> Read<V::Value> {
        de::Deserializer::deserialize_any(self, visitor)
    }
}

/// The field of the value at body offset `target`, as a path
/// (`sub_node_list[17].port`), found by walking the body again (only when
/// a file is refused); empty when the walk cannot get there.
fn field_at(body: &[u8], target: usize) -> String {
    let mut r = Reader {
        bytes: body,
        at: 0,
        strings: Vec::new(),
        depth: 0,
    };
    if r.strings().is_err() || target < r.at {
        return if target < r.at {
            "string table".to_string()
        } else {
            String::new()
        };
    }
    let mut path = Vec::new();
    walk(&mut r, target, &mut path);
    let mut out = String::new();
    for p in &path {
        match p {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

enum Step<'de> {
    Key(&'de str),
    Index(usize),
}

/// Walks the value at the reader's offset; true when it reached `target`
/// (with `path` leading to the innermost value that holds it).
fn walk<'de>(r: &mut Reader<'de>, target: usize, path: &mut Vec<Step<'de>>) -> bool {
    if r.at >= target || path.len() > MAX_NESTING {
        return true;
    }
    let Ok(tag) = r.byte() else { return true };
    let ok = match tag {
        NULL | FALSE | TRUE => true,
        UINT | NEG | STR => r.varint().is_ok(),
        FLOAT => {
            r.at += 8;
            r.at <= r.bytes.len()
        }
        SEQ | MAP => {
            let Ok(n) = r.count() else { return true };
            for i in 0..n {
                if tag == SEQ {
                    path.push(Step::Index(i));
                } else {
                    let key = if r.bytes.get(r.at) == Some(&STR) {
                        let start = r.at;
                        r.at += 1;
                        r.string(start).ok()
                    } else {
                        None
                    };
                    match key {
                        Some(k) => path.push(Step::Key(k)),
                        None => return true,
                    }
                }
                if r.at >= target || walk(r, target, path) {
                    return true;
                }
                path.pop();
            }
            true
        }
        _ => return true,
    };
    !ok || r.at > target
}

#[cfg(test)]
mod tests;
