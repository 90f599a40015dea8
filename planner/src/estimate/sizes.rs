//! Message sizes and node counts as people write them (`256KiB`, `200KB`,
//! `64..1024`), parsed and printed.
//!
//! # Units
//!
//! | unit | bytes |
//! |---|---|
//! | `B` or none | 1 |
//! | `KB`, `MB`, `GB` (decimal, SI) | 10^3, 10^6, 10^9 |
//! | `KiB`, `MiB`, `GiB` (binary, IEC) | 2^10, 2^20, 2^30 |
//! | `K`, `M`, `G` | 2^10, 2^20, 2^30, as nccl-tests' `-b`/`-e` read them |
//!
//! Units are case-insensitive except that the `i` marks the binary ones
//! (`kb` is decimal, `kib` binary). A value may have a decimal fraction
//! when the result is a whole number of bytes (`1.5MB` = 1,500,000 B,
//! `0.5KiB` = 512 B); `200KB` is 200,000 bytes, not 204,800.

use super::check_size;
use crate::error::{Error, Result};

/// The help text every option that takes a size shows.
pub const SIZE_UNITS: &str = "units: B; KB, MB, GB = 10^3, 10^6, 10^9 bytes; KiB, MiB, GiB (or K, M, G) = 2^10, 2^20, 2^30 bytes";

/// Parses a message size: a number of bytes with an optional unit (see the
/// module documentation); at least 1 byte.
pub fn parse_size(text: &str) -> Result<u64> {
    let size = parse_byte_count(text)?;
    check_size(size)?;
    Ok(size)
}

/// Parses a number of bytes with an optional unit, as [`parse_size`], 0
/// allowed.
pub fn parse_byte_count(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad = |why: &str| {
        Error::parameter(
            "size",
            format!(
                "`{text}` is not a size{why}; write e.g. 4096, 200KB, 256KiB or 16MiB ({SIZE_UNITS})"
            ),
        )
    };
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim();
    let multiplier: u64 = match unit {
        "" | "b" | "B" => 1,
        _ => {
            let lower = unit.to_ascii_lowercase();
            match lower.as_str() {
                "kb" => 1_000,
                "mb" => 1_000_000,
                "gb" => 1_000_000_000,
                "k" | "kib" => 1 << 10,
                "m" | "mib" => 1 << 20,
                "g" | "gib" => 1 << 30,
                _ => return Err(bad("")),
            }
        }
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return Err(bad(""));
    }
    let digits = |d: &str| -> Result<u64> {
        if d.is_empty() {
            Ok(0)
        } else {
            d.parse::<u64>()
                .map_err(|_| bad(": the number is too large"))
        }
    };
    let too_large = || bad(": it is more than 2^64 bytes");
    let mut bytes = digits(whole)?
        .checked_mul(multiplier)
        .ok_or_else(too_large)?;
    if !fraction.is_empty() {
        if fraction.len() > 18 {
            return Err(bad(": too many decimals"));
        }
        let scale = 10u128.pow(fraction.len() as u32);
        let part = u128::from(digits(fraction)?) * u128::from(multiplier);
        if part % scale != 0 {
            return Err(bad(": it is not a whole number of bytes"));
        }
        let part = u64::try_from(part / scale).map_err(|_| too_large())?;
        bytes = bytes.checked_add(part).ok_or_else(too_large)?;
    }
    Ok(bytes)
}

/// Parses a size list, the one grammar of both crates (`planner
/// simulate --size`, `provisioner probe --size`, `lab run --size`): sizes
/// and ranges separated by commas, a range `FROM..TO` being FROM, 2·FROM,
/// 4·FROM, ... up to TO (`1KiB..256MiB`, `3KB..12KB` = 3000, 6000,
/// 12000 B). An empty list is refused; each command adds its own limits.
pub fn parse_sizes(text: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((from, to)) = part.split_once("..") else {
            out.push(parse_size(part)?);
            continue;
        };
        let (from, to) = (parse_size(from)?, parse_size(to)?);
        if from == 0 || from > to {
            return Err(Error::parameter(
                "size",
                format!(
                    "`{part}`: a range goes from a positive size up to a larger one, e.g. 1KiB..256MiB"
                ),
            ));
        }
        let mut s = from;
        while s <= to {
            out.push(s);
            match s.checked_mul(2) {
                Some(next) => s = next,
                None => break,
            }
        }
    }
    if out.is_empty() {
        return Err(Error::parameter(
            "size",
            "no size: give one (1MiB), a list (8B,1MiB) or a range (8B..256MiB)",
        ));
    }
    Ok(out)
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

/// A size as people write it: `256KiB`, `16MiB`, `200KB`, `1000B`
/// (binary units first, then decimal ones, for an exact multiple).
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    for (scale, unit) in [(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "KB")] {
        if bytes >= scale && bytes.is_multiple_of(scale) {
            return format!("{}{unit}", bytes / scale);
        }
    }
    format!("{bytes}B")
}
