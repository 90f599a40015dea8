//! Small text utilities shared by parsers and reports: byte offsets to
//! line/column, name patterns such as `node{n:02}`, port lists such as
//! `1-16,33`, a column-aligned table for human output, bytes as hex
//! digits (digests, nonces) and lists of values as messages write them
//! (`a, b or c`).

use std::fmt::Write as _;

pub use crate::error::line_col;

/// `a, b or c` (`a or b`, `a`; nothing for none): how a message lists the
/// values it takes, the one writer of such lists for both crates.
pub fn or_list<S: AsRef<str>>(items: &[S]) -> String {
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(if i + 1 == items.len() { " or " } else { ", " });
        }
        out.push_str(item.as_ref());
    }
    out
}

/// Lower-case hex digits of `bytes` (a digest, a nonce): the one writer of
/// hex for both crates.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// SHA-256 (FIPS 180-4) of `data` as 64 lower-case hex digits: the render
/// manifest's and the push journal's digests.
#[cfg(feature = "digest")]
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(data))
}

/// True when `text` is `n` written in decimal, as `n.to_string()` writes
/// it, without making that string (`05` and `+5` are not 5).
pub fn is_decimal(text: &str, n: u64) -> bool {
    // Any other text that parses to `n` has a sign or leading zeros, so
    // it is longer.
    let digits = n.checked_ilog10().map_or(1, |d| d as usize + 1);
    text.len() == digits && text.parse::<u64>() == Ok(n)
}

/// Returns the 1-based line of a byte offset in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    line_col(text, offset).0
}

/// The lines of a text, found once, so that the line of each of many
/// offsets costs a binary search instead of a scan from the start (a
/// checker that names the line of every problem of a large input would
/// otherwise take time quadratic in its size).
#[derive(Debug, Clone)]
pub struct LineIndex {
    /// Byte offset of every `\n`.
    newlines: Vec<usize>,
}

impl LineIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> LineIndex {
        LineIndex {
            newlines: text
                .bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        }
    }

    /// The 1-based line of byte `offset`, as [`line_of`] gives it.
    pub fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }
}

/// A name with an optional instance-number placeholder: `node{n:02}` names
/// `node01`, `node02`, ...; `{n}` is the plain number, `{n:0W}` pads it with
/// zeros to W digits and `{n:0Wx}` writes it in hexadecimal (for MACs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamePattern {
    parts: Vec<PatternPart>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PatternPart {
    Literal(String),
    /// The instance number, or with `per` above 1 the number of its group
    /// of `per` instances (`{n/4}`: four servers to a rack).
    Number {
        width: usize,
        hex: bool,
        per: u64,
    },
}

/// The largest divisor of a `{n/K}` placeholder.
const MAX_PER: u64 = 1_000_000;

impl NamePattern {
    /// Parses a pattern; the error says which placeholder is not understood.
    pub fn parse(pattern: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = pattern;
        while let Some(open) = rest.find(['{', '}']) {
            literal.push_str(&rest[..open]);
            if rest[open..].starts_with('}') {
                return Err(format!(
                    "`}}` without `{{` in `{pattern}`; placeholders are written {{n}}, {{n:02}} or {{n/4}}"
                ));
            }
            let Some(close) = rest[open..].find('}') else {
                return Err(format!(
                    "unclosed `{{` in `{pattern}`; placeholders are written {{n}}, {{n:02}} or {{n/4}}"
                ));
            };
            let inner = &rest[open + 1..open + close];
            let part = parse_placeholder(inner).ok_or_else(|| {
                format!(
                    "unknown placeholder `{{{inner}}}` in `{pattern}`; use {{n}}, {{n:02}} (zero-padded), {{n:02x}} (hexadecimal), or {{n/4}} (the group of 4 instances n is in, e.g. its rack; {{n/4:02}} padded), dividing by 1 to {MAX_PER}"
                )
            })?;
            if !literal.is_empty() {
                parts.push(PatternPart::Literal(std::mem::take(&mut literal)));
            }
            parts.push(part);
            rest = &rest[open + close + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(PatternPart::Literal(literal));
        }
        Ok(Self { parts })
    }

    /// True when the pattern numbers its instances.
    pub fn has_placeholder(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, PatternPart::Number { .. }))
    }

    /// The name of instance `n` of a template whose instances are
    /// numbered from `start`. `{n/K}` is the group of K instances that `n`
    /// is in, groups numbered from `start` too: with `start = 1`, instances
    /// 1-4 are group 1 and 5-8 group 2; with `start = 0`, 0-3 are 0.
    pub fn render(&self, n: u64, start: u64) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match *part {
                PatternPart::Literal(ref s) => out.push_str(s),
                PatternPart::Number { width, hex, per } => {
                    let v = if per > 1 {
                        n.saturating_sub(start) / per + start
                    } else {
                        n
                    };
                    if hex {
                        let _ = write!(out, "{v:0width$x}");
                    } else {
                        let _ = write!(out, "{v:0width$}");
                    }
                }
            }
        }
        out
    }
}

fn parse_placeholder(inner: &str) -> Option<PatternPart> {
    let (number, format) = match inner.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (inner, None),
    };
    let per = match number.strip_prefix("n") {
        Some("") => 1,
        Some(rest) => {
            let k = rest.strip_prefix('/')?;
            if k.is_empty() || k.len() > 7 || !k.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let k: u64 = k.parse().ok()?;
            if !(1..=MAX_PER).contains(&k) {
                return None;
            }
            k
        }
        None => return None,
    };
    let Some(spec) = format else {
        return Some(PatternPart::Number {
            width: 0,
            hex: false,
            per,
        });
    };
    let (digits, hex) = match spec.strip_suffix('x') {
        Some(d) => (d, true),
        None => (spec, false),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 3 {
        return None;
    }
    let width: usize = digits.parse().ok()?;
    if width > 20 {
        return None;
    }
    Some(PatternPart::Number { width, hex, per })
}

/// Parses a port list such as `1-16`, `1-8,17-24` or `5` into sorted port
/// numbers; numbers are 1-based. Errors say what is wrong with the list.
pub fn parse_port_list(list: &str) -> Result<Vec<u32>, String> {
    let mut ports = Vec::new();
    for item in list.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (lo, hi) = match item.split_once('-') {
            Some((a, b)) => (parse_port(a, list)?, parse_port(b, list)?),
            None => {
                let p = parse_port(item, list)?;
                (p, p)
            }
        };
        if hi < lo {
            return Err(format!(
                "range `{item}` in `{list}` runs backwards; write it low-high"
            ));
        }
        if hi - lo > 1_000_000 {
            return Err(format!("range `{item}` in `{list}` is implausibly long"));
        }
        ports.extend(lo..=hi);
    }
    ports.sort_unstable();
    let before = ports.len();
    ports.dedup();
    if ports.len() != before {
        return Err(format!("`{list}` names some ports more than once"));
    }
    Ok(ports)
}

fn parse_port(s: &str, list: &str) -> Result<u32, String> {
    let s = s.trim();
    match s.parse::<u32>() {
        Ok(0) => Err(format!("port 0 in `{list}`: ports are numbered from 1")),
        Ok(p) => Ok(p),
        Err(_) => Err(format!(
            "`{s}` in `{list}` is not a port number; write ports as `1-16,33`"
        )),
    }
}

/// Formats sorted port numbers compactly: `[1,2,3,5]` becomes `1-3,5`.
pub fn format_port_list(ports: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < ports.len() {
        let start = ports[i];
        let mut end = start;
        while i + 1 < ports.len() && ports[i + 1] == end + 1 {
            i += 1;
            end = ports[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            let _ = write!(out, "{start}");
        } else {
            let _ = write!(out, "{start}-{end}");
        }
        i += 1;
    }
    out
}

/// Column alignment in a [`Table`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A plain-text table with aligned columns, for people.
#[derive(Debug, Clone)]
pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with the given headers; columns are left-aligned unless set.
    pub fn new<I, S>(headers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        let align = vec![Align::Left; headers.len()];
        Self {
            headers,
            align,
            rows: Vec::new(),
        }
    }

    /// Right-aligns the given columns (numbers read better that way).
    pub fn right(mut self, columns: &[usize]) -> Self {
        for &c in columns {
            if let Some(a) = self.align.get_mut(c) {
                *a = Align::Right;
            }
        }
        self
    }

    /// Adds a row; missing cells are blank, extra cells are dropped.
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut row: Vec<String> = cells.into_iter().map(Into::into).collect();
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// Number of rows added so far.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Renders the table with two spaces between columns and no trailing
    /// spaces.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let mut line = |cells: &[String]| {
            let mut l = String::new();
            for (i, cell) in cells.iter().enumerate() {
                if i > 0 {
                    l.push_str("  ");
                }
                let pad = widths[i] - cell.chars().count();
                match self.align[i] {
                    Align::Left => {
                        l.push_str(cell);
                        l.extend(std::iter::repeat_n(' ', pad));
                    }
                    Align::Right => {
                        l.extend(std::iter::repeat_n(' ', pad));
                        l.push_str(cell);
                    }
                }
            }
            out.push_str(l.trim_end());
            out.push('\n');
        };
        line(&self.headers);
        for row in &self.rows {
            line(row);
        }
        out
    }
}

/// Formats a bandwidth in Gbps to at most one decimal, without a needless
/// fraction: `100`, `12.5`, `63` (for 63.015).
pub fn gbps(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

/// Parses counts as people write them on the command line: one number, a
/// comma-separated list, or `FROM..TO` doubling from FROM while at most TO
/// (`8..64` is 8, 16, 32, 64). Every number must be at least `min`. `None`
/// when the text is none of these (the caller names the option).
pub fn parse_counts(text: &str, min: usize) -> Option<Vec<usize>> {
    let number = |s: &str| s.trim().parse::<usize>().ok().filter(|&n| n >= min);
    if let Some((from, to)) = text.split_once("..") {
        let (from, to) = (number(from)?, number(to)?);
        if from > to || from == 0 {
            return None;
        }
        let mut out = Vec::new();
        let mut n = from;
        while n <= to {
            out.push(n);
            n = n.checked_mul(2)?;
        }
        return Some(out);
    }
    let out = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(number)
        .collect::<Option<Vec<usize>>>()?;
    (!out.is_empty()).then_some(out)
}

/// One record of a CSV input: the 1-based line it starts on and its
/// fields, trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvRecord {
    /// 1-based line of the record's first character.
    pub line: usize,
    /// The fields, unquoted and trimmed of surrounding whitespace.
    pub fields: Vec<String>,
}

/// Reads CSV per RFC 4180 (the `csv` crate): fields may be quoted with
/// `"` (a doubled `""` inside is one quote, and a quoted field may hold
/// commas and line breaks), records may have any number of fields, lines
/// starting with `#` and blank lines are skipped. `file` names the input
/// in errors.
pub fn read_csv(text: &str, file: &str) -> crate::Result<Vec<CsvRecord>> {
    // Comment lines are blanked rather than left to the reader; lines are
    // counted from byte offsets, since the reader's own count skips blank
    // and comment lines.
    let blanked;
    let text = if text.lines().any(|l| l.trim_start().starts_with('#')) {
        blanked = text
            .split('\n')
            .map(|l| {
                if l.trim_start().starts_with('#') {
                    ""
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        blanked.as_str()
    } else {
        text
    };
    let mut lines = LineCounter::new(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        let before = reader.position().byte();
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                // The position is where reading started, before the
                // blank lines the reader skipped.
                let mut start = record.position().map_or(before, csv::Position::byte) as usize;
                while matches!(text.as_bytes().get(start), Some(b'\n' | b'\r')) {
                    start += 1;
                }
                let line = lines.line_at(start);
                if record.iter().all(str::is_empty) {
                    continue;
                }
                out.push(CsvRecord {
                    line,
                    fields: record.iter().map(str::to_string).collect(),
                });
            }
            Err(e) => {
                let at = e.position().map_or(before, csv::Position::byte);
                let line = lines.line_at(at as usize);
                let message = match e.kind() {
                    csv::ErrorKind::Utf8 { .. } => "the line is not UTF-8".to_string(),
                    _ => format!("not CSV: {e}"),
                };
                return Err(crate::Error::Syntax {
                    file: file.to_string(),
                    line,
                    column: 1,
                    message,
                });
            }
        }
    }
    Ok(out)
}

/// 1-based lines of increasing byte offsets, counted once over the text.
struct LineCounter<'a> {
    text: &'a [u8],
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text: text.as_bytes(),
            offset: 0,
            line: 1,
        }
    }

    /// The line of byte `offset`; offsets must not decrease.
    fn line_at(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.text.len());
        if offset > self.offset {
            self.line += self.text[self.offset..offset]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            self.offset = offset;
        }
        self.line
    }
}

/// Writes CSV per RFC 4180 (the `csv` crate): a field is quoted when it
/// holds a comma, a quote or a line break, so every value without
/// surrounding whitespace (every name, by the name rule) reads back
/// unchanged with [`read_csv`]. Records end with `\n`. A record whose first
/// field starts with `#` would read back as a comment; names cannot.
pub fn write_csv<R, F>(records: impl IntoIterator<Item = R>) -> String
where
    R: IntoIterator<Item = F>,
    F: AsRef<str>,
{
    let mut writer = csv::WriterBuilder::new()
        .flexible(true)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    for r in records {
        // Writing to a Vec cannot fail.
        let _ = writer.write_record(r.into_iter().map(|f| f.as_ref().to_string()));
    }
    // Flushing into a Vec cannot fail either, and the fields were UTF-8.
    let bytes = writer.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "digest")]
    #[test]
    fn sha256_of_the_fips_examples() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // Two blocks.
        assert_eq!(
            sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
    }

    #[test]
    fn hex_is_two_lower_case_digits_a_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0, 9, 10, 255, 0x5a]), "00090aff5a");
    }

    #[test]
    fn the_line_index_agrees_with_line_of() {
        let text = "a\nbc\n\nd é\n";
        let index = LineIndex::new(text);
        for offset in 0..=text.len() + 2 {
            assert_eq!(index.line(offset), line_of(text, offset), "offset {offset}");
        }
    }

    #[test]
    fn decimal_text_is_what_to_string_writes() {
        for n in [0u64, 5, 9, 10, 99, 100, 4_294_967_295, u64::MAX] {
            assert!(is_decimal(&n.to_string(), n), "{n}");
        }
        for (text, n) in [
            ("05", 5),
            ("+5", 5),
            ("00", 0),
            ("-0", 0),
            ("", 0),
            ("5 ", 5),
            ("6", 5),
        ] {
            assert!(!is_decimal(text, n), "{text:?}");
        }
    }

    #[test]
    fn csv_round_trips_and_counts_lines() {
        let text = write_csv([["a", "b,c"], ["d\"e", "f\ng"], ["", "h"]]);
        assert_eq!(text, "a,\"b,c\"\n\"d\"\"e\",\"f\ng\"\n,h\n");
        let back = read_csv(&format!("# c\n\n{text}\n# end\nx\n"), "t.csv").unwrap();
        let fields: Vec<Vec<&str>> = back
            .iter()
            .map(|r| r.fields.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            fields,
            [
                vec!["a", "b,c"],
                vec!["d\"e", "f\ng"],
                vec!["", "h"],
                vec!["x"]
            ]
        );
        let lines: Vec<usize> = back.iter().map(|r| r.line).collect();
        assert_eq!(lines, [3, 4, 6, 9]);
    }

    #[test]
    fn counts_single_list_and_doubling_range() {
        assert_eq!(parse_counts("64", 1), Some(vec![64]));
        assert_eq!(parse_counts("8, 24", 1), Some(vec![8, 24]));
        assert_eq!(parse_counts("8..64", 1), Some(vec![8, 16, 32, 64]));
        assert_eq!(parse_counts("8..100", 1), Some(vec![8, 16, 32, 64]));
        for bad in ["", ",", "64..8", "x", "1..4", "8..", "-2"] {
            assert_eq!(parse_counts(bad, 2), None, "{bad:?}");
        }
    }

    #[test]
    fn line_col_counts_from_one() {
        let t = "ab\ncd\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 1), (1, 2));
        assert_eq!(line_col(t, 3), (2, 1));
        assert_eq!(line_col(t, 100), (3, 1));
        assert_eq!(line_col("é\nx", 1), (1, 1));
    }

    #[test]
    fn patterns_render() {
        let check = |p: &str, n: u64, want: &str| {
            assert_eq!(NamePattern::parse(p).unwrap().render(n, 1), want, "{p}");
        };
        check("node{n:02}", 3, "node03");
        check("node{n}", 12, "node12");
        check("sw", 1, "sw");
        check("r{n:03}-x{n}", 7, "r007-x7");
        check("aa:bb:{n:02x}", 255, "aa:bb:ff");
        // Issue #33: four servers to a rack, groups counted from the
        // template's start.
        for (n, want) in [(1, "r1"), (4, "r1"), (5, "r2"), (8, "r2"), (9, "r3")] {
            check("r{n/4}", n, want);
        }
        check("rack{n/4:02}", 16, "rack04");
        let zero = NamePattern::parse("r{n/4}").unwrap();
        assert_eq!(
            [0, 3, 4].map(|n| zero.render(n, 0)),
            ["r0", "r0", "r1"].map(String::from)
        );
        assert!(NamePattern::parse("r{n/4}").unwrap().has_placeholder());
        assert!(!NamePattern::parse("sw").unwrap().has_placeholder());
        assert!(NamePattern::parse("a{n}").unwrap().has_placeholder());
    }

    #[test]
    fn bad_patterns_explain() {
        for bad in [
            "n{",
            "n}",
            "n{m}",
            "n{n:}",
            "n{n:2y}",
            "{n:9999}",
            "r{n/0}",
            "r{n/}",
            "r{n/x}",
            "r{n*4}",
            "r{n/99999999}",
        ] {
            let err = NamePattern::parse(bad).unwrap_err();
            assert!(err.contains(bad), "{err}");
        }
    }

    #[test]
    fn port_lists() {
        assert_eq!(parse_port_list("1-4,7").unwrap(), vec![1, 2, 3, 4, 7]);
        assert_eq!(parse_port_list(" 3 ").unwrap(), vec![3]);
        assert!(parse_port_list("0-3").unwrap_err().contains("from 1"));
        assert!(parse_port_list("4-1").unwrap_err().contains("backwards"));
        assert!(
            parse_port_list("1-3,2")
                .unwrap_err()
                .contains("more than once")
        );
        assert!(parse_port_list("a").unwrap_err().contains("not a port"));
        assert_eq!(format_port_list(&[1, 2, 3, 5, 7, 8]), "1-3,5,7-8");
        assert_eq!(format_port_list(&[]), "");
    }

    #[test]
    fn table_aligns() {
        let mut t = Table::new(["name", "n"]).right(&[1]);
        t.row(["a", "10"]);
        t.row(["bbb", "2"]);
        assert_eq!(t.render(), "name   n\na     10\nbbb    2\n");
    }

    #[test]
    fn gbps_formats() {
        assert_eq!(gbps(100.0), "100");
        assert_eq!(gbps(12.5), "12.5");
        assert_eq!(gbps(1.0 / 3.0), "0.3");
        assert_eq!(gbps(63.015), "63");
    }
}
