//! The plan's JSON layout: the root object has a key per line, arrays of
//! objects or strings have an element per line, everything else is compact.
//! Every port, sub-node and cable is one line: small enough for fabrics of
//! a hundred thousand sub-nodes, readable with `grep`, and diffs in version
//! control show exactly the ports that changed.

use std::io::{self, Write};

use serde_json::ser::{CharEscape, CompactFormatter, Formatter};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArrayMode {
    Undecided,
    Lines,
    Inline,
}

#[derive(Debug, Clone, Copy)]
enum Frame {
    Object { pretty: bool },
    Array { mode: ArrayMode, empty: bool },
}

/// A serde_json formatter with the plan's layout.
#[derive(Debug, Default)]
pub(crate) struct PlanFormatter {
    stack: Vec<Frame>,
    /// A separator owed to the enclosing array: `Some(first)`.
    pending: Option<bool>,
}

impl PlanFormatter {
    fn depth(&self) -> usize {
        self.stack
            .iter()
            .filter(|f| {
                matches!(
                    f,
                    Frame::Object { pretty: true }
                        | Frame::Array {
                            mode: ArrayMode::Lines,
                            ..
                        }
                )
            })
            .count()
    }

    fn newline<W: ?Sized + Write>(w: &mut W, depth: usize) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Writes the separator an array owes before a value; `lines` says
    /// whether this kind of value goes on lines of its own.
    fn start_value<W: ?Sized + Write>(&mut self, w: &mut W, lines: bool) -> io::Result<()> {
        let Some(first) = self.pending.take() else {
            return Ok(());
        };
        if let Some(Frame::Array { mode, empty }) = self.stack.last_mut() {
            *empty = false;
            if *mode == ArrayMode::Undecided {
                *mode = if lines {
                    ArrayMode::Lines
                } else {
                    ArrayMode::Inline
                };
            }
            let mode = *mode;
            if !first {
                w.write_all(b",")?;
            }
            match mode {
                ArrayMode::Lines => {
                    let d = self.depth();
                    Self::newline(w, d)?;
                }
                _ if !first => w.write_all(b" ")?,
                _ => {}
            }
        }
        Ok(())
    }
}

macro_rules! scalar {
    ($($name:ident($t:ty)),* $(,)?) => {
        $(
            fn $name<W: ?Sized + Write>(&mut self, w: &mut W, value: $t) -> io::Result<()> {
                self.start_value(w, false)?;
                CompactFormatter.$name(w, value)
            }
        )*
    };
}

impl Formatter for PlanFormatter {
    scalar!(
        write_bool(bool),
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_i128(i128),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
        write_u128(u128),
        write_f32(f32),
        write_f64(f64),
    );

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.start_value(w, false)?;
        w.write_all(b"null")
    }

    fn write_number_str<W: ?Sized + Write>(&mut self, w: &mut W, value: &str) -> io::Result<()> {
        self.start_value(w, false)?;
        w.write_all(value.as_bytes())
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.start_value(w, true)?;
        w.write_all(b"\"")
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        CompactFormatter.write_char_escape(w, escape)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.start_value(w, true)?;
        self.stack.push(Frame::Array {
            mode: ArrayMode::Undecided,
            empty: true,
        });
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.pending = None;
        let frame = self.stack.pop();
        if let Some(Frame::Array {
            mode: ArrayMode::Lines,
            empty: false,
        }) = frame
        {
            let d = self.depth();
            Self::newline(w, d)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, _w: &mut W, first: bool) -> io::Result<()> {
        self.pending = Some(first);
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.start_value(w, true)?;
        let pretty = self.stack.is_empty();
        self.stack.push(Frame::Object { pretty });
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if let Some(Frame::Object { pretty: true }) = self.stack.pop() {
            let d = self.depth();
            Self::newline(w, d)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        let pretty = matches!(self.stack.last(), Some(Frame::Object { pretty: true }));
        if !first {
            w.write_all(b",")?;
        }
        if pretty {
            let d = self.depth();
            Self::newline(w, d)
        } else if !first {
            w.write_all(b" ")
        } else {
            Ok(())
        }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(v: &serde_json::Value) -> String {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, PlanFormatter::default());
        serde::Serialize::serialize(v, &mut ser).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn layout() {
        let v = serde_json::json!({
            "a": 1,
            "list": [{"x": 1, "y": [1, 2]}, {"x": 2, "y": []}],
            "notes": ["one", "two"],
            "nested": {"k": [{"p": 1}], "s": "t\"q"},
            "empty": []
        });
        let want = r#"{
  "a": 1,
  "empty": [],
  "list": [
    {"x": 1, "y": [1, 2]},
    {"x": 2, "y": []}
  ],
  "nested": {"k": [
    {"p": 1}
  ], "s": "t\"q"},
  "notes": [
    "one",
    "two"
  ]
}"#;
        assert_eq!(render(&v), want);
        // The layout is valid JSON that reads back the same.
        let back: serde_json::Value = serde_json::from_str(&render(&v)).unwrap();
        assert_eq!(back, v);
    }
}
