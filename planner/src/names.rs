//! The name rule: what a name that reaches an output may hold, and the
//! quoting every writer applies on top of it.
//!
//! Names end up in switch configurations (NVUE shell scripts, Comware and
//! EOS CLI, SONiC JSON), host `.env` files that a shell sources, Open MPI
//! rankfiles and hostfiles, CSV files and Kubernetes objects. So every name
//! of an inventory or a plan follows one rule, checked when the inventory
//! and the plan are read (see `docs/inventory.md`):
//!
//! - a **name** (`[inventory] name`, server, switch, rack, NIC, GPU,
//!   netdev, socket, PCIe switch, slot, root port, virtual-switch suffix,
//!   QoS class, catalog part, and every such name in a plan) is 1 to
//!   [`MAX_LEN`] characters from ASCII letters, digits and [`PUNCTUATION`]
//!   (`._-/:+@`), starting with a letter or a digit: no whitespace, no
//!   control characters, no quotes, no commas, no shell metacharacters;
//! - a **pattern** (a template's name, `port_name`, a NIC's `mac` and `ip`)
//!   follows the same rule outside its `{...}` placeholders, which hold
//!   letters, digits, `:` and `/` only (`node{n:02}`, `swp{p}`, `r{n/4}`);
//! - a switch **model** is words of name characters and parentheses
//!   separated by single spaces (`H3C S9850-4C`): models only reach
//!   comments, descriptions and JSON strings.
//!
//! The checks return what is wrong in a sentence; callers wrap it in a
//! [`crate::Problem`] or a validation finding naming the object.
//!
//! Defence in depth: writers still quote what they interpolate, with
//! [`shell_quote`] (NVUE, `.env`), [`comment`] (one-line comments) and
//! [`description`] (switch `description` fields), and error messages print
//! input text through [`escape`], so no control character reaches a
//! terminal raw.

use std::fmt;

/// The punctuation a name may hold besides ASCII letters and digits.
pub const PUNCTUATION: &str = "._-/:+@";

/// The longest name (or pattern), in characters.
pub const MAX_LEN: usize = 128;

/// How the rule is stated in fixes.
pub const RULE: &str = "use ASCII letters, digits and `._-/:+@` only, starting with a letter or digit (see the name rule in docs/inventory.md)";

/// True for a character a name may hold.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || PUNCTUATION.contains(c)
}

/// Describes a character for a message: `` `;` ``, `a newline`, `U+0085`.
fn describe(c: char) -> String {
    match c {
        ' ' => "a space".to_string(),
        '\t' => "a tab".to_string(),
        '\n' => "a newline".to_string(),
        '\r' => "a carriage return".to_string(),
        c if c.is_control() || !c.is_ascii() => format!("the character U+{:04X}", u32::from(c)),
        c => format!("`{c}`"),
    }
}

fn check_length(s: &str, what: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("the {what} is empty"));
    }
    let n = s.chars().count();
    if n > MAX_LEN {
        return Err(format!(
            "the {what} `{}` has {n} characters, more than {MAX_LEN}",
            escape(s)
        ));
    }
    Ok(())
}

/// The first character that breaks the rule for names, with its position
/// (1-based, in characters).
fn first_bad(s: &str, ok: impl Fn(char) -> bool) -> Option<(usize, char)> {
    s.chars()
        .enumerate()
        .find(|&(_, c)| !ok(c))
        .map(|(i, c)| (i + 1, c))
}

fn bad_char(s: &str, what: &str, at: usize, c: char) -> String {
    format!(
        "the {what} `{}` has {} at character {at}",
        escape(s),
        describe(c)
    )
}

/// True for a name that passes [`check_name`]: 1 to [`MAX_LEN`] bytes,
/// every one a name character (so ASCII, and as many characters as bytes),
/// the first a letter or digit.
fn is_plain_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_LEN
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || PUNCTUATION.as_bytes().contains(&c))
}

/// Checks a name; the error says what is wrong (the caller names the
/// object and gives [`RULE`] as the fix).
pub fn check_name(name: &str) -> Result<(), String> {
    // The common case, decided on bytes: a plan checks a million names.
    if is_plain_name(name) {
        return Ok(());
    }
    check_length(name, "name")?;
    if let Some((at, c)) = first_bad(name, is_name_char) {
        return Err(bad_char(name, "name", at, c));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "the name `{}` starts with `{}`",
            escape(name),
            &name[..1]
        ));
    }
    Ok(())
}

/// Checks a pattern: the name rule outside `{...}` placeholders, which
/// hold letters, digits, `:` and `/` (the pattern's own parser says which
/// placeholders it understands: `{n/4}` divides).
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    check_address(pattern)?;
    if !pattern.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '{') {
        return Err(format!(
            "the pattern `{}` starts with `{}`",
            escape(pattern),
            &pattern[..1]
        ));
    }
    Ok(())
}

/// Checks a MAC or IP address pattern (`02:00:00:00:00:{n:02x}`,
/// `fd00::{n}`, `::1`): [`check_pattern`] without its rule on the first
/// character.
pub fn check_address(pattern: &str) -> Result<(), String> {
    check_length(pattern, "pattern")?;
    let mut in_placeholder = false;
    for (i, c) in pattern.chars().enumerate() {
        let ok = match c {
            '{' if !in_placeholder => {
                in_placeholder = true;
                true
            }
            '}' if in_placeholder => {
                in_placeholder = false;
                true
            }
            c if in_placeholder => c.is_ascii_alphanumeric() || c == ':' || c == '/',
            c => is_name_char(c),
        };
        if !ok {
            return Err(bad_char(pattern, "pattern", i + 1, c));
        }
    }
    if in_placeholder {
        return Err(format!(
            "the pattern `{}` has an unclosed `{{`",
            escape(pattern)
        ));
    }
    Ok(())
}

/// Checks a switch model: words of name characters and parentheses
/// separated by single spaces (`32x400G in 4x100G breakout (128x100G)`).
pub fn check_model(model: &str) -> Result<(), String> {
    check_length(model, "model")?;
    if let Some((at, c)) = first_bad(model, |c| is_name_char(c) || " ()".contains(c)) {
        return Err(bad_char(model, "model", at, c));
    }
    if model.starts_with(' ') || model.ends_with(' ') || model.contains("  ") {
        return Err(format!(
            "the model `{}` has a leading, trailing or double space",
            escape(model)
        ));
    }
    Ok(())
}

/// Checks a host name for an Open MPI rankfile or hostfile, which split
/// lines at whitespace, `=`, `@`, `:` and `#`: letters, digits, `.`, `-`
/// and `_`, starting with a letter or digit.
pub fn check_mpi_host(host: &str) -> Result<(), String> {
    check_length(host, "host name")?;
    if let Some((at, c)) = first_bad(host, |c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
        return Err(bad_char(host, "host name", at, c));
    }
    if !host.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "the host name `{}` starts with `{}`",
            escape(host),
            &host[..1]
        ));
    }
    Ok(())
}

/// Input text as it may be printed: control characters (C0, DEL, C1),
/// line and paragraph separators and bidirectional overrides are written
/// as escapes (`\n`, `\u{1b}`, `\u{85}`), so nothing from an input can
/// move the cursor, change the terminal or end a line. Other text,
/// including other non-ASCII letters and symbols, is kept.
pub fn escape(s: &str) -> String {
    Escaped(s).to_string()
}

/// [`escape`] as a `Display` value, for format strings.
#[derive(Debug, Clone, Copy)]
pub struct Escaped<'a>(pub &'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use fmt::Write as _;
        let s = self.0;
        if !s.chars().any(is_unsafe) {
            return f.write_str(s);
        }
        for c in s.chars() {
            match c {
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if is_unsafe(c) => write!(f, "\\u{{{:x}}}", u32::from(c))?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// Characters [`escape`] rewrites.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// [`escape`] for messages made of several lines: every line is escaped,
/// the line breaks between them are kept.
pub fn escape_lines(s: &str) -> String {
    s.split('\n').map(escape).collect::<Vec<_>>().join("\n")
}

/// Quotes a word for a POSIX shell: bare when it holds only characters
/// no shell treats specially, else in single quotes (a `'` inside becomes
/// `'\''`). The result is always one word with the value unchanged.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:,=@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Text for a one-line comment (shell `#`, EOS `!`, Comware `#`): as
/// [`escape`], and characters outside ASCII escaped too, so no newline can
/// end the comment and the file stays ASCII.
pub fn comment(s: &str) -> String {
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    out
}

/// Text for a switch `description` field of at most `max` characters:
/// escaped as [`comment`], then cut at `max` characters without splitting
/// an escape (the escaped text is ASCII, so the cut is on a character).
pub fn description(s: &str, max: usize) -> String {
    let mut d = comment(s);
    if d.len() > max {
        d.truncate(max);
        // Never end with half of an escape such as `\` or `\u{8`.
        if let Some(back) = d.rfind('\\') {
            let tail = &d[back..];
            let complete = matches!(tail, "\\n" | "\\r" | "\\t")
                || (tail.starts_with("\\u{") && tail.ends_with('}'));
            if !complete {
                d.truncate(back);
            }
        }
    }
    d
}

/// A device name as a file name: characters other than letters, digits,
/// `-`, `_` and `.` become `_`. Host files are `<stem>.env` and
/// `<stem>.json`.
pub fn file_stem(name: &str) -> String {
    file_stem_of(name).into_owned()
}

/// [`file_stem`], borrowing the name when it is its own stem (nearly
/// always: the load check asks for every device's).
pub fn file_stem_of(name: &str) -> std::borrow::Cow<'_, str> {
    let keeps = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.chars().all(keeps) {
        return std::borrow::Cow::Borrowed(name);
    }
    std::borrow::Cow::Owned(
        name.chars()
            .map(|c| if keeps(c) { c } else { '_' })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, ok: bool) {
        assert_eq!(check_name(name).is_ok(), ok, "{name:?}");
    }

    #[test]
    fn names_follow_the_rule() {
        for good in [
            "node01",
            "mlx5_0",
            "sw-32x100",
            "cpu0-rp0",
            "HundredGigE1/0/5",
            "a.b:c+d@e",
            "eflops-4x16",
        ] {
            check(good, true);
        }
        for bad in [
            "",
            "node 1",
            "node\n1",
            "gpu,0",
            "a;b",
            "a'b",
            "a\"b",
            "$x",
            "a`b`",
            "a|b",
            "a&b",
            "a>b",
            "a(b)",
            "a*",
            "a#b",
            "a=b",
            "a\\b",
            "-rf",
            ".hidden",
            "node\u{85}",
            "nöde",
        ] {
            check(bad, false);
        }
        check(&"a".repeat(MAX_LEN), true);
        check(&"a".repeat(MAX_LEN + 1), false);
    }

    #[test]
    fn patterns_allow_placeholders_only() {
        for good in [
            "node{n:02}",
            "swp{p}",
            "HundredGigE1/0/{p}",
            "02:00:00:00:00:{n:02x}",
            "10.0.0.{n}",
            "{n}",
        ] {
            assert!(check_pattern(good).is_ok(), "{good}");
        }
        for bad in ["swp{p};touch X;", "node{n:02} x", "a{n", "a{ n}", "a{$(x)}"] {
            assert!(check_pattern(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn models_may_have_single_spaces() {
        assert!(check_model("H3C S9850-4C").is_ok());
        assert!(check_model("NVIDIA SN2100").is_ok());
        assert!(check_model("32x400G in 4x100G breakout (128x100G)").is_ok());
        for bad in [" S9850", "S9850 ", "a  b", "a\tb", "a\nb", "a,b", "a;b", ""] {
            assert!(check_model(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn mpi_hosts_are_host_names() {
        assert!(check_mpi_host("node01").is_ok());
        assert!(check_mpi_host("node01.rack-1_a").is_ok());
        for bad in ["user@node", "node:1", "a b", "a=b", "#x", "-x", ""] {
            assert!(check_mpi_host(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn escape_leaves_no_control_character() {
        assert_eq!(escape("plain text"), "plain text");
        assert_eq!(escape("a\nb\u{1b}[2J\u{85}é"), "a\\nb\\u{1b}[2J\\u{85}é");
        assert_eq!(comment("né\u{202e}"), "n\\u{e9}\\u{202e}");
        assert_eq!(escape_lines("a\u{7}\nb"), "a\\u{7}\nb");
        assert_eq!(comment("x\nshutdown"), "x\\nshutdown");
    }

    #[test]
    fn shell_quote_is_one_word() {
        assert_eq!(shell_quote("swp1"), "swp1");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("swp1;touch X;"), "'swp1;touch X;'");
    }

    #[test]
    fn descriptions_are_cut_without_half_escapes() {
        assert_eq!(description("abc", 80), "abc");
        assert_eq!(description("abcdef", 4), "abcd");
        assert_eq!(description("ab\ncd", 3), "ab");
        assert_eq!(description("ab\ncd", 4), "ab\\n");
        assert_eq!(description("a\u{85}", 5), "a");
        assert!(!description("mlx5_0\nshutdown", 80).contains('\n'));
    }
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod injection_tests;
