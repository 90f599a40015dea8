//! Message sizes and node counts as people write them (`256KiB`,
//! `64..1024`), parsed and printed.

use super::check_size;
use crate::error::{Error, Result};

/// Parses a message size: a whole number of bytes with an optional unit,
/// `B`, `KiB`, `MiB`, `GiB` (or `K`, `M`, `G`, also powers of 1024).
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = || {
        Error::parameter(
            "size",
            format!("`{text}` is not a size; write e.g. 4096, 256KiB or 16MiB"),
        )
    };
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let value: u64 = digits.parse().map_err(|_| bad())?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        _ => return Err(bad()),
    };
    let size = value.checked_mul(1u64 << shift).ok_or_else(bad)?;
    check_size(size)?;
    Ok(size)
}

/// Parses sizes: `FROM..TO` (every power of two from FROM to TO, FROM a
/// power of two) or a comma-separated list.
pub fn parse_sizes(text: &str) -> Result<Vec<u64>> {
    if let Some((from, to)) = text.split_once("..") {
        let (from, to) = (parse_size(from)?, parse_size(to)?);
        if from > to || !from.is_power_of_two() {
            return Err(Error::parameter(
                "size",
                format!(
                    "`{text}`: a range goes from a power of two up to a larger size, e.g. 1KiB..256MiB"
                ),
            ));
        }
        let mut out = Vec::new();
        let mut s = from;
        while s <= to {
            out.push(s);
            match s.checked_mul(2) {
                Some(next) => s = next,
                None => break,
            }
        }
        return Ok(out);
    }
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(parse_size)
        .collect()
}

/// Parses node counts: `FROM..TO` (doubling) or a comma-separated list,
/// each at least 2.
pub fn parse_nodes(text: &str) -> Result<Vec<usize>> {
    let nodes = crate::text::parse_counts(text, 2).ok_or_else(|| {
        Error::parameter(
            "scale",
            format!("`{text}` is not a node count or range; write e.g. 64..1024 or 64,256"),
        )
    })?;
    for &n in &nodes {
        crate::limits::SCALE_NODES
            .check(n as u64)
            .map_err(|e| Error::parameter("scale", format!("`{text}`: {e}")))?;
    }
    Ok(nodes)
}

/// A size as people write it: `256KiB`, `16MiB`, `1000B`.
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}
