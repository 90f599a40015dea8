//! The one YAML writer of both crates: block-style YAML from any
//! `Serialize` value, in which every string that a YAML 1.1 or YAML 1.2
//! reader could resolve to another type is quoted, so that every reader
//! (kubectl's YAML 1.1 resolver, PyYAML, Go's yaml.v2 and yaml.v3,
//! libyaml-based readers) reads the same values.
//!
//! serde_norway, the YAML library of the workspace, quotes a string only
//! when its own YAML 1.2 resolver would read another type, so `1_000`,
//! `1:20`, `yes`, `on` or `2001-12-14` came out plain and a YAML 1.1
//! reader took them for numbers, booleans or dates. This writer leaves a
//! string plain only when it cannot be anything but a string under either
//! version (see [`plain_is_safe`]): it begins with a letter, `/`, `_` or
//! `$` (or `-` and a letter or `-`), is not one of the 1.1 and 1.2 words for
//! booleans and null in any case, and holds nothing YAML reads as syntax.
//! Every other string is single-quoted; a string with line breaks is a
//! literal block (`|`), one with other control characters double-quoted
//! with escapes. Numbers, booleans and null are written as serde_norway
//! writes them, which both versions read as the same type.
//!
//! The layout is serde_norway's (libyaml's): two-space indentation,
//! sequences under a key not indented, fields in their declared order.

use serde::Serialize;
use serde_norway::{Mapping, Value};

/// `value` as one YAML document (no `---` line), ending in a newline. The
/// value goes through serde_norway's own value, whose mappings keep the
/// order the fields were serialised in.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, serde_norway::Error> {
    let value = serde_norway::to_value(value)?;
    let mut out = String::new();
    node(&value, 0, Place::Document, &mut out);
    Ok(out)
}

/// Where a value is written: alone, after a key, or after `- `.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Document,
    Value,
    Item,
}

/// `v` at indentation `n`; in `place`, the line may already be started.
fn node(v: &Value, n: usize, place: Place, out: &mut String) {
    match v {
        Value::Mapping(m) if !m.is_empty() => {
            if place == Place::Value {
                out.push('\n');
            }
            let inner = if place == Place::Value { n + 2 } else { n };
            mapping(m, inner, place == Place::Item, out);
        }
        Value::Sequence(a) if !a.is_empty() => {
            if place == Place::Value {
                out.push('\n');
            }
            sequence(a, n, place == Place::Item, out);
        }
        Value::Tagged(t) => {
            // An enum variant with data: written as `{variant: data}`, as
            // JSON has it, so that no reader needs to know local tags.
            let mut m = Mapping::new();
            let tag = t.tag.to_string();
            m.insert(
                Value::String(tag.trim_start_matches('!').to_string()),
                t.value.clone(),
            );
            node(&Value::Mapping(m), n, place, out);
        }
        v => {
            if place == Place::Value {
                out.push(' ');
            }
            let block = match place {
                Place::Value => n + 2,
                Place::Item => n,
                Place::Document => 2,
            };
            scalar(v, block, out);
            out.push('\n');
        }
    }
}

/// True when `s` may be written as a plain scalar: no YAML 1.1 or 1.2
/// reader resolves it to anything but this string. Conservative on
/// purpose: it does not copy a resolver's patterns but admits only
/// strings that start like a word and hold no syntax.
pub fn plain_is_safe(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let second = chars.next();
    let starts_well = first.is_alphabetic()
        || matches!(first, '/' | '_' | '$')
        || (first == '-'
            && second.is_some_and(|c| c.is_ascii_alphabetic() || c == '-')
            && !s.starts_with("---"));
    if !starts_well {
        return false;
    }
    // The words YAML 1.1 (yaml.org/type/bool.html, null.html) and 1.2
    // (core schema) read as booleans or null, in every case.
    const WORDS: [&str; 9] = ["y", "n", "yes", "no", "on", "off", "true", "false", "null"];
    if WORDS.iter().any(|w| s.eq_ignore_ascii_case(w)) {
        return false;
    }
    !s.ends_with(':')
        && !s.ends_with(' ')
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.contains(":\t")
        && s.chars().all(|c| !special(c))
}

/// A character that must be escaped: a control character (C0, DEL, C1),
/// the byte order mark, and what YAML 1.1 reads as a line break or YAML
/// does not print (U+2028, U+2029, U+FFFE, U+FFFF; YAML 1.2.2 section 5.1).
fn special(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{feff}' | '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}'
        )
}

fn indent(n: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// A mapping at indentation `n`; with `inline`, its first key goes on the
/// line already started (after `- `).
fn mapping(m: &Mapping, n: usize, inline: bool, out: &mut String) {
    for (i, (k, v)) in m.iter().enumerate() {
        if i > 0 || !inline {
            indent(n, out);
        }
        match k {
            Value::String(k) => key(k, out),
            k => scalar(k, n, out),
        }
        out.push(':');
        node(v, n, Place::Value, out);
    }
}

/// A sequence at indentation `n`; with `inline`, its first item goes on
/// the line already started.
fn sequence(a: &[Value], n: usize, inline: bool, out: &mut String) {
    for (i, v) in a.iter().enumerate() {
        if i > 0 || !inline {
            indent(n, out);
        }
        out.push_str("- ");
        node(v, n + 2, Place::Item, out);
    }
}

/// A scalar or an empty collection; a literal block's lines are indented
/// by `n`.
fn scalar(v: &Value, n: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(x) => out.push_str(&x.to_string()),
        Value::String(s) => string(s, n, out),
        Value::Sequence(_) => out.push_str("[]"),
        Value::Mapping(_) => out.push_str("{}"),
        Value::Tagged(t) => scalar(&t.value, n, out),
    }
}

/// A key: plain when safe, else quoted on one line (a key cannot be a
/// block).
fn key(s: &str, out: &mut String) {
    if plain_is_safe(s) {
        out.push_str(s);
    } else if s.chars().any(special) {
        double_quoted(s, out);
    } else {
        single_quoted(s, out);
    }
}

fn single_quoted(s: &str, out: &mut String) {
    out.push('\'');
    out.push_str(&s.replace('\'', "''"));
    out.push('\'');
}

fn string(s: &str, n: usize, out: &mut String) {
    if plain_is_safe(s) {
        out.push_str(s);
    } else if literal_fits(s) {
        literal(s, n, out);
    } else if s.chars().any(special) {
        double_quoted(s, out);
    } else {
        single_quoted(s, out);
    }
}

/// A literal block keeps a multi-line string as it is, when it has line
/// breaks, no other control character but tabs, and a first line that
/// does not begin with white space (whose indentation would be taken for
/// the block's).
fn literal_fits(s: &str) -> bool {
    s.contains('\n')
        && !s.starts_with([' ', '\t', '\n'])
        && s.chars().all(|c| c == '\n' || c == '\t' || !special(c))
}

fn literal(s: &str, n: usize, out: &mut String) {
    let body = s.trim_end_matches('\n');
    let trailing = s.len() - body.len();
    out.push_str(match trailing {
        0 => "|-",
        1 => "|",
        _ => "|+",
    });
    let lines: Vec<&str> = if trailing > 1 {
        s[..s.len() - 1].split('\n').collect()
    } else {
        body.split('\n').collect()
    };
    for line in lines {
        out.push('\n');
        if !line.is_empty() {
            indent(n, out);
            out.push_str(line);
        }
    }
}

fn double_quoted(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if special(c) => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
