//! The serde serializer of the compact plan: values tagged as the
//! module documentation of [`super`] says, strings into one table.

use serde::ser::{self, Serialize};

use super::{FALSE, FLOAT, MAP, NEG, NULL, SEQ, STR, TRUE, UINT};

pub(super) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The serde serializer of the compact plan: the values into `out`, the
/// strings into the table.
#[derive(Default)]
pub(super) struct Writer {
    pub(super) out: Vec<u8>,
    pub(super) strings: Vec<String>,
    pub(super) index: rustc_hash::FxHashMap<String, u32>,
    pub(super) table_bytes: usize,
}

/// An error of the writer (a value the encoding has no form for).
#[derive(Debug)]
pub(super) struct WriteError(String);

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
pub(super) struct Container<'a> {
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
pub(super) struct Variant<'a> {
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
