//! The mutations of the fuzz harness, shared by the property tests
//! (`planner/tests/it/fuzz.rs`, `provisioner/tests/it/fuzz.rs`) and the
//! campaign over the real binaries ([`crate::campaign`]).
//!
//! A case is a seed: [`Rng`] is SplitMix64, so the same seed gives the same
//! mutated text on every machine. [`mutate`] applies one to three of:
//!
//! - structural: drop, duplicate, swap or move a line (the bundled TOML,
//!   CSV and one-object-per-line plan JSON keep one entry per line, so
//!   these drop, repeat and reorder entries);
//! - numbers: one number token becomes 0, 1, -1, a huge value, `u64::MAX`,
//!   a float, NaN or infinity;
//! - names: one string value gets a newline, `;`, a quote, a comma,
//!   U+0085, a trailing space, shell text, or another name of the file;
//! - bytes: one character becomes a control, quote or bracket character;
//!   the text is truncated.
//!
//! [`Scale::Bounded`] leaves out the numbers that a correct program must
//! refuse but an unfixed one may spend minutes or gigabytes on; the
//! in-process property tests use it, and the campaign, which runs every
//! case under a time and memory limit, uses [`Scale::Any`].

use std::path::{Path, PathBuf};

/// The bundled inventories (the small ones twice: they are quick).
pub const INVENTORIES: &[&str] = &[
    "topologies/eflops-4x16.toml",
    "topologies/eflops-4x16.toml",
    "topologies/fat-tree-64.toml",
    "topologies/fat-tree-k16.toml",
    "topologies/bigraph-1024.toml",
    "topologies/fat-tree-1024.toml",
    "topologies/h100-8x32.toml",
    "topologies/dgx1-v100.toml",
    "topologies/s822lc-48.toml",
    "topologies/cloud-8x16.toml",
    "topologies/hpn-h100-1024.toml",
];

/// Small plans: the bundled example and the golden cases' plans.
pub const PLANS: &[&str] = &[
    "examples/data/eflops-4x16.plan.json",
    "examples/data/eflops-4x16.plan.json",
    "examples/data/eflops-4x16.plan.json",
    "planner/tests/golden/ranks-small-exact/plan.json",
    "planner/tests/golden/ranks-fat-tree-hdrm/plan.json",
    "planner/tests/golden/export-fat-tree-k4-volcano/plan.json",
];

/// The plan the other inputs belong to.
pub const EFLOPS_PLAN: &str = "examples/data/eflops-4x16.plan.json";

/// The parts catalog.
pub const CATALOG: &str = "examples/data/catalog-example.toml";

/// As-built cabling of [`EFLOPS_PLAN`]: CSV, with mistakes, LLDP.
pub const CABLING: &[&str] = &[
    "examples/data/eflops-4x16.cables.csv",
    "examples/data/eflops-4x16.miswired.csv",
    "examples/data/eflops-4x16.lldp.json",
];

/// Iteration models (TOML and CSV).
pub const MODELS: &[&str] = &[
    "planner/tests/golden/iteration-user-model-toml/model.toml",
    "planner/tests/golden/iteration-user-model-csv/model.csv",
];

/// QoS overrides of [`EFLOPS_PLAN`].
pub const QOS: &[&str] = &[
    "planner/tests/golden/check-qos-eflops-one-priority/qos.toml",
    "planner/tests/golden/check-qos-eflops-switch-mtu/qos.toml",
];

/// A rank file of [`EFLOPS_PLAN`] for `verify-ranks --ranks-file`.
pub const RANK_FILE: &str = "planner/tests/golden/verify-ranks-file/ranks.csv";

/// The provisioner's job files.
pub const JOBS: &[&str] = &[
    "examples/allreduce-32.job.toml",
    "examples/allreduce-32-mpi.job.toml",
    "examples/allreduce-32-dra.job.toml",
    "examples/train-32-dra.job.toml",
];

/// The workspace root (this crate sits one level below it).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// A bundled file, by its path from the workspace root.
pub fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A number from the environment, or `default`.
pub fn env_number(key: &str, default: u64) -> u64 {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The message of a caught panic.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// SplitMix64: small, fast and the same everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }
}

/// How a file is written, which decides how strings are escaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// TOML (inventories, catalogs, job files, models, QoS overrides).
    Toml,
    /// JSON (plans, LLDP).
    Json,
    /// CSV (cabling, rank tables, models).
    Csv,
}

impl Format {
    /// The format of a file by its extension (TOML when unknown).
    pub fn of(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Format::Json,
            Some("csv") => Format::Csv,
            _ => Format::Toml,
        }
    }
}

/// Which numbers a mutation may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Numbers a program handles in milliseconds once it checks them:
    /// small, negative, fractional, NaN, infinite, and values that do not
    /// fit the types (`u64::MAX`, 2^64).
    Bounded,
    /// Also counts that are large but fit (10^7, 2^32, 2^62): an
    /// unchecked program expands them into minutes and gigabytes.
    Any,
}

const BOUNDED_NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-7",
    "7",
    "1000",
    "0.5",
    "1e-9",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
];

const HUGE_NUMBERS: &[&str] = &[
    "65535",
    "65536",
    "131072",
    "10000000",
    "4294967295",
    "4294967296",
    "4611686018427387904",
    "2400000000000000000",
    "1e300",
    "1.7976931348623157e308",
];

/// Written only where the format has them: TOML floats and CSV cells.
const NON_FINITE: &[&str] = &["nan", "inf", "-inf", "NaN", "1e999"];

/// What a name mutation does to a string value `s` (`{}` is `s`).
const NAME_MUTATIONS: &[&str] = &[
    "{}\nrank 99=evil slot=0:0",
    "{}\nshutdown",
    "{};touch /tmp/planner-fuzz-pwned;",
    "{}$(id)",
    "{}`id`",
    "{}\"",
    "{}'",
    "{},x",
    "{}\u{85}",
    "{} ",
    " {}",
    "{}\t",
    "{}\r",
    "{}\u{0}",
    "{}\u{1b}[31m",
    "{}\u{202e}",
    "{}é",
    "{}/../../x",
    "{}{p}",
    // Port name templates a vendor takes as its own interface names.
    "swp{p};touch /tmp/planner-fuzz-pwned;",
    "Ethernet{p}\nshutdown",
    "{}#",
    "",
    " ",
    "{}{}",
];

/// A mutated input and what was done to it, for the failure report.
#[derive(Debug, Clone)]
pub struct Mutated {
    /// The mutated text.
    pub text: String,
    /// One line per mutation, in order.
    pub steps: Vec<String>,
}

/// Applies one to three random mutations to `text`.
pub fn mutate(text: &str, format: Format, scale: Scale, rng: &mut Rng) -> Mutated {
    let mut out = text.to_string();
    let mut steps = Vec::new();
    let n = 1 + rng.below(3);
    for _ in 0..n {
        let step = match rng.below(10) {
            0 | 1 => line_op(&mut out, rng),
            2..=4 => number_op(&mut out, format, scale, rng),
            5..=7 => name_op(&mut out, format, rng),
            8 => char_op(&mut out, rng),
            _ => {
                if rng.chance(1, 2) {
                    truncate_op(&mut out, rng)
                } else {
                    line_op(&mut out, rng)
                }
            }
        };
        steps.push(step);
    }
    Mutated { text: out, steps }
}

fn line_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < text.len() {
        spans.push((start, text.len()));
    }
    spans
}

fn line_op(text: &mut String, rng: &mut Rng) -> String {
    let spans = line_spans(text);
    if spans.len() < 2 {
        return truncate_op(text, rng);
    }
    let mut lines: Vec<String> = spans
        .iter()
        .map(|&(a, b)| {
            let mut l = text[a..b].to_string();
            if !l.ends_with('\n') {
                l.push('\n');
            }
            l
        })
        .collect();
    let i = rng.below(lines.len());
    let step = match rng.below(4) {
        0 => {
            lines.remove(i);
            format!("drop line {}", i + 1)
        }
        1 => {
            let copies = *rng.pick(&[1usize, 1, 2, 16]);
            for _ in 0..copies {
                lines.insert(i, lines[i].clone());
            }
            format!("duplicate line {} x{copies}", i + 1)
        }
        2 => {
            let j = rng.below(lines.len());
            lines.swap(i, j);
            format!("swap lines {} and {}", i + 1, j + 1)
        }
        _ => {
            let l = lines.remove(i);
            let j = rng.below(lines.len() + 1);
            lines.insert(j, l);
            format!("move line {} to {}", i + 1, j + 1)
        }
    };
    *text = lines.concat();
    step
}

/// Byte ranges of number tokens outside strings and comments.
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    let mut in_str = false;
    let mut in_comment = false;
    while i < b.len() {
        let c = b[i];
        if in_comment {
            if c == b'\n' {
                in_comment = false;
            }
            i += 1;
            continue;
        }
        if in_str {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' || c == b'\n' {
                in_str = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'#' => in_comment = true,
            b'0'..=b'9' | b'-' => {
                let prev_ok = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
                let start = i;
                let mut j = i + 1;
                while j < b.len()
                    && (b[j].is_ascii_digit() || matches!(b[j], b'.' | b'e' | b'E' | b'+' | b'_'))
                {
                    j += 1;
                }
                let next_ok = j >= b.len() || !b[j].is_ascii_alphabetic();
                if prev_ok && next_ok && b[start..j].iter().any(u8::is_ascii_digit) {
                    spans.push((start, j));
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    spans
}

/// Byte ranges of the contents of double-quoted strings (JSON, TOML basic
/// strings), or of CSV cells.
fn string_spans(text: &str, format: Format) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut spans = Vec::new();
    if format == Format::Csv {
        for (a, e) in line_spans(text) {
            let line = &text[a..e];
            if line.starts_with('#') {
                continue;
            }
            let mut start = a;
            for (k, ch) in line.char_indices() {
                if ch == ',' || ch == '\n' || ch == '\r' {
                    if a + k > start {
                        spans.push((start, a + k));
                    }
                    start = a + k + 1;
                }
            }
            if start < e && !text[start..e].trim().is_empty() {
                spans.push((start, e));
            }
        }
        return spans;
    }
    let mut i = 0;
    let mut in_comment = false;
    while i < b.len() {
        let c = b[i];
        if in_comment {
            in_comment = c != b'\n';
            i += 1;
            continue;
        }
        if c == b'#' && format == Format::Toml {
            in_comment = true;
        } else if c == b'"' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && b[j] != b'"' && b[j] != b'\n' {
                if b[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            if j < b.len() && b[j] == b'"' {
                spans.push((start, j));
            }
            i = j + 1;
            continue;
        }
        i += 1;
    }
    spans
}

fn number_op(text: &mut String, format: Format, scale: Scale, rng: &mut Rng) -> String {
    let spans = number_spans(text);
    if spans.is_empty() {
        return name_op(text, format, rng);
    }
    let span = *rng.pick(&spans);
    number_op_at(text, span, format, scale, rng)
}

fn number_op_at(
    text: &mut String,
    (a, b): (usize, usize),
    format: Format,
    scale: Scale,
    rng: &mut Rng,
) -> String {
    let mut pool: Vec<&str> = BOUNDED_NUMBERS.to_vec();
    if format != Format::Json {
        pool.extend_from_slice(NON_FINITE);
    }
    // Half of the numbers of an unbounded campaign are large: they are what
    // finds work done before a bound is checked.
    if scale == Scale::Any && rng.chance(1, 2) {
        pool = HUGE_NUMBERS.to_vec();
    }
    let old = text[a..b].to_string();
    let new = (*rng.pick(&pool)).to_string();
    let line = text[..a].matches('\n').count() + 1;
    text.replace_range(a..b, &new);
    format!("line {line}: number {old} -> {new}")
}

/// Replaces one number of `text` (a command-line argument such as `2x8`
/// or `tiers=2,sub-nodes=64`) with a mutated one; `None` when it has none.
pub fn mutate_number(text: &str, scale: Scale, rng: &mut Rng) -> Option<(String, String)> {
    let spans: Vec<(usize, usize)> = text
        .char_indices()
        .filter(|&(i, c)| {
            c.is_ascii_digit() && (i == 0 || !text.as_bytes()[i - 1].is_ascii_digit())
        })
        .map(|(i, _)| {
            let end = text[i..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(text.len(), |e| i + e);
            (i, end)
        })
        .collect();
    if spans.is_empty() {
        return None;
    }
    let mut out = text.to_string();
    let step = number_op_at(&mut out, *rng.pick(&spans), Format::Csv, scale, rng);
    Some((out, step))
}

/// Escapes `s` for the inside of a JSON string or TOML basic string.
fn escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// Reverses [`escape`] for the common escapes (enough to recover a name).
fn unescape(s: &str) -> String {
    s.replace("\\\"", "\"")
        .replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\\\", "\\")
}

fn name_op(text: &mut String, format: Format, rng: &mut Rng) -> String {
    let spans = string_spans(text, format);
    if spans.is_empty() {
        return char_op(text, rng);
    }
    let (a, b) = *rng.pick(&spans);
    let old = if format == Format::Csv {
        text[a..b].to_string()
    } else {
        unescape(&text[a..b])
    };
    let line = text[..a].matches('\n').count() + 1;
    // One time in five: another string of the file, so two objects share a
    // name or a reference points elsewhere.
    let new = if rng.chance(1, 5) {
        let (c, d) = *rng.pick(&spans);
        if format == Format::Csv {
            text[c..d].to_string()
        } else {
            unescape(&text[c..d])
        }
    } else {
        rng.pick(NAME_MUTATIONS).replace("{}", &old)
    };
    let written = match format {
        Format::Csv => new.clone(),
        _ => escape(&new),
    };
    text.replace_range(a..b, &written);
    format!("line {line}: string {old:?} -> {new:?}")
}

const CHARS: &[char] = &[
    '\0', '\n', '\r', '\t', '"', '\'', '\\', ',', ';', '#', '[', ']', '{', '}', '=', '-', '0', '9',
    ' ', '\u{85}', '\u{feff}', 'x',
];

fn char_op(text: &mut String, rng: &mut Rng) -> String {
    let positions: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    if positions.is_empty() {
        text.push('"');
        return "append a quote to an empty text".to_string();
    }
    let i = *rng.pick(&positions);
    let len = text[i..].chars().next().map_or(0, char::len_utf8);
    let c = *rng.pick(CHARS);
    let line = text[..i].matches('\n').count() + 1;
    let old = text[i..i + len].to_string();
    text.replace_range(i..i + len, &c.to_string());
    format!("line {line}: character {old:?} -> {c:?}")
}

fn truncate_op(text: &mut String, rng: &mut Rng) -> String {
    if text.is_empty() {
        return "truncate an empty text".to_string();
    }
    let mut at = rng.below(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let line = text[..at].matches('\n').count() + 1;
    text.truncate(at);
    format!("truncate at byte {at} (line {line})")
}

/// A unified-style summary of what changed: the lines of `new` that are not
/// in `old` and the other way round (enough to reproduce a case by hand).
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let mut out = String::new();
    let mut start = 0;
    while start < a.len() && start < b.len() && a[start] == b[start] {
        start += 1;
    }
    if a.len() == b.len() {
        // Same line count: only the lines that differ, with their numbers.
        for (i, (x, y)) in a
            .iter()
            .zip(&b)
            .enumerate()
            .filter(|(_, (x, y))| x != y)
            .take(20)
        {
            out.push_str(&format!("line {}:\n-{x:?}\n+{y:?}\n", i + 1));
        }
        return out;
    }
    let (mut ea, mut eb) = (a.len(), b.len());
    while ea > start && eb > start && a[ea - 1] == b[eb - 1] {
        ea -= 1;
        eb -= 1;
    }
    out.push_str(&format!(
        "@@ -{},{} +{},{} @@\n",
        start + 1,
        ea - start,
        start + 1,
        eb - start
    ));
    let cap = 12;
    for l in a[start..ea].iter().take(cap) {
        out.push_str(&format!("-{l:?}\n"));
    }
    if ea - start > cap {
        out.push_str(&format!("- ... {} more lines\n", ea - start - cap));
    }
    for l in b[start..eb].iter().take(cap) {
        out.push_str(&format!("+{l:?}\n"));
    }
    if eb - start > cap {
        out.push_str(&format!("+ ... {} more lines\n", eb - start - cap));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_deterministic_and_change_the_text() {
        let text = "name = \"a\"\n[[x]]\ncount = 4\nspeed = 100\n";
        let mut changed = 0;
        for seed in 0..200 {
            let one = mutate(text, Format::Toml, Scale::Any, &mut Rng::new(seed));
            let two = mutate(text, Format::Toml, Scale::Any, &mut Rng::new(seed));
            assert_eq!(one.text, two.text, "seed {seed}");
            changed += usize::from(one.text != text);
        }
        assert!(
            changed > 150,
            "only {changed} of 200 mutations changed the text"
        );
    }

    #[test]
    fn numbers_and_strings_are_found() {
        let text = "a = \"x#1\" # 5\nb = -12.5e3\nc = [1, 2]\nd = \"q\\\"r\"\n";
        let nums: Vec<&str> = number_spans(text)
            .iter()
            .map(|&(a, b)| &text[a..b])
            .collect();
        assert_eq!(nums, ["-12.5e3", "1", "2"]);
        let strs: Vec<&str> = string_spans(text, Format::Toml)
            .iter()
            .map(|&(a, b)| &text[a..b])
            .collect();
        assert_eq!(strs, ["x#1", "q\\\"r"]);
        assert_eq!(escape("a\"\n\u{85}"), "a\\\"\\n\\u0085");
    }
}
