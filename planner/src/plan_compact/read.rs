//! The serde deserializer of a compact body, with the offset of every
//! fault and the field path a refusal names ([`field_at`]).

use std::borrow::Cow;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use super::{FALSE, FLOAT, MAP, NEG, NULL, SEQ, STR, TRUE, UINT};
use crate::input::MAX_NESTING;

/// Why a compact body cannot be read: the offset in the body and what is
/// wrong there.
#[derive(Debug)]
pub(super) struct Fault {
    pub(super) at: usize,
    pub(super) message: String,
}

impl Fault {
    pub(super) fn at(at: usize, message: impl Into<String>) -> Self {
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

/// A LEB128 varint at `bytes[*at..]`, `at` moved past it.
#[inline]
pub(super) fn varint_at(bytes: &[u8], at: &mut usize) -> Read<u64> {
    // Most numbers (tags' counts aside) and every field name's string
    // index fit one byte: read at once, as the loop below would.
    if let Some(&b) = bytes.get(*at)
        && b < 0x80
    {
        *at += 1;
        return Ok(u64::from(b));
    }
    let start = *at;
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes
            .get(*at)
            .ok_or_else(|| Fault::at(*at, "the file ends inside a value"))?;
        *at += 1;
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

/// The serde deserializer of a compact body.
pub(super) struct Reader<'de> {
    pub(super) bytes: &'de [u8],
    pub(super) at: usize,
    /// The string table: read by [`Reader::strings`], or lent.
    pub(super) strings: Cow<'de, [&'de str]>,
    pub(super) depth: usize,
}

pub(super) type Read<T> = std::result::Result<T, Fault>;

impl<'de> Reader<'de> {
    fn byte(&mut self) -> Read<u8> {
        let b = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| Fault::at(self.at, "the file ends inside a value"))?;
        self.at += 1;
        Ok(b)
    }

    #[inline]
    pub(super) fn varint(&mut self) -> Read<u64> {
        varint_at(self.bytes, &mut self.at)
    }

    pub(super) fn count(&mut self) -> Read<usize> {
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

    pub(super) fn strings(&mut self) -> Read<()> {
        let n = self.varint()?;
        if n > (self.bytes.len() - self.at) as u64 {
            return Err(Fault::at(
                0,
                format!("a table of {n} strings is more than the bytes left"),
            ));
        }
        let mut strings = Vec::with_capacity(n as usize);
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
            strings.push(s);
            self.at = end;
        }
        self.strings = Cow::Owned(strings);
        Ok(())
    }

    fn string(&mut self, start: usize) -> Read<&'de str> {
        self.entry(start).map(|(_, s)| s)
    }

    /// A string's index in the table and its text.
    #[inline]
    pub(super) fn entry(&mut self, start: usize) -> Read<(usize, &'de str)> {
        let i = self.varint()?;
        usize::try_from(i)
            .ok()
            .and_then(|i| Some((i, *self.strings.get(i)?)))
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

    /// A string the visitor may keep as a plan [`crate::plan::Name`]: it
    /// is told which table entry it is, so that every use of an entry
    /// shares one name without hashing its text.
    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Read<V::Value> {
        if self.bytes.get(self.at) != Some(&STR) {
            return self.deserialize_any(visitor);
        }
        let start = self.at;
        self.at += 1;
        let (i, s) = self.entry(start)?;
        crate::plan::offer_name(i, s);
        let r = visitor.visit_borrowed_str(s);
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
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// The items left of a sequence or map.
pub(super) struct Items<'a, 'de> {
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
pub(super) fn field_at(body: &[u8], target: usize) -> String {
    let mut r = Reader {
        bytes: body,
        at: 0,
        strings: Cow::Borrowed(&[]),
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
