//! The one place an input file is read, by both binaries: only a regular file (a device such as `/dev/zero`, a FIFO or a directory is refused before it is opened for reading), of at most [`MAX_INPUT_BYTES`], as UTF-8, nested at most [`MAX_NESTING`] levels deep (measured by [`nesting`] before any parser sees the text); every refusal names the file and the limit.

use std::io::Read as _;
use std::path::Path;

/// The most bytes an input file may have: 256 MiB, far above the largest
/// plan the toolkit writes (a 4,096-server plan is under 40 MiB) and far
/// below what would strain a machine's memory.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The deepest nesting an input file may have, as [`nesting`] measures it:
/// 128 levels, the recursion limit serde_json and serde_norway apply while
/// they build values (`serde_json::Deserializer` and serde_norway's
/// `remaining_depth`, both 128). The toolkit's own files stay under 20; the
/// check runs before the parser because a YAML parser spends time growing
/// with the square of the depth before that limit is reached (a 600 KB file
/// nested 100,000 levels took 85 s).
pub const MAX_NESTING: usize = 128;

/// Reads the input file `path` whole; the error is a sentence naming the
/// file and what to give instead.
pub fn read(path: &Path) -> Result<String, String> {
    text(read_bytes(path)?, &path.display().to_string())
}

/// Reads the input file `path` whole as bytes (a regular file of at most
/// [`MAX_INPUT_BYTES`]), for a file that may be binary (a compact plan,
/// [`crate::plan_compact`]); [`text`] makes text of them.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let name = path.display();
    let cannot = |e: std::io::Error| format!("cannot read {name}: {e}");
    // Look before opening: opening a FIFO for reading waits for a writer.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    check(&name.to_string(), &meta)?;
    let file = std::fs::File::open(path).map_err(cannot)?;
    // And again on what was opened, in case the path changed meanwhile.
    let meta = file.metadata().map_err(cannot)?;
    check(&name.to_string(), &meta)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large(&name.to_string(), bytes.len() as u64));
    }
    Ok(bytes)
}

/// The bytes of the input file `name` as text: UTF-8, nested at most
/// [`MAX_NESTING`] levels deep ([`check_nesting`]).
pub fn text(bytes: Vec<u8>, name: &str) -> Result<String, String> {
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "cannot read {name}: byte {} is not UTF-8 text; give a text file",
            e.utf8_error().valid_up_to()
        )
    })?;
    check_nesting(&text, name)?;
    Ok(text)
}

/// Refuses `text` (the file `name`) when [`nesting`] finds it nested more
/// than [`MAX_NESTING`] levels deep.
pub fn check_nesting(text: &str, name: &str) -> Result<(), String> {
    match nesting(text, MAX_NESTING) {
        Some(line) => Err(format!(
            "cannot read {name}: line {line} is nested more than {MAX_NESTING} levels deep, the limit for an input file (brackets, and YAML's indentation and `- ` entries, each count one); give a flatter file"
        )),
        None => Ok(()),
    }
}

/// The first line (1-based) at which `text` is nested more than `limit`
/// levels deep, in one pass and without parsing, so that it holds for
/// every format the toolkit reads (JSON, TOML, YAML, CSV) and costs time
/// in proportion to the text:
///
/// - every `[` or `{` opens a level and every `]` or `}` closes one,
///   wherever they stand (inside strings and comments too, so the measure
///   is never below the parser's: flow collections are JSON's, TOML's
///   arrays and inline tables, and YAML's flow style);
/// - outside brackets, each line adds the indentation levels it stands at
///   (a stack of indentation widths, as YAML's block collections nest) and
///   the `- ` and `? ` entries it begins with (YAML's compact nested
///   sequences and explicit keys, which nest without indentation).
///
/// `None` when it never is.
pub fn nesting(text: &str, limit: usize) -> Option<usize> {
    let mut brackets = 0usize;
    let mut widths: Vec<usize> = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let mut block = 0;
        if brackets == 0 {
            let body = line.trim_start_matches(' ');
            if !body.trim().is_empty() && !body.starts_with('#') {
                let width = line.len() - body.len();
                while widths.last().is_some_and(|&w| w > width) {
                    widths.pop();
                }
                if widths.last() != Some(&width) {
                    widths.push(width);
                }
                let mut rest = body;
                let mut entries = 0;
                while let Some(r) = ["- ", "-\t", "? ", "?\t"]
                    .iter()
                    .find_map(|p| rest.strip_prefix(p))
                {
                    entries += 1;
                    rest = r.trim_start_matches([' ', '\t']);
                }
                block = widths.len() - 1 + entries;
            }
        }
        if block > limit {
            return Some(i + 1);
        }
        for b in line.bytes() {
            match b {
                b'[' | b'{' => {
                    brackets += 1;
                    if block + brackets > limit {
                        return Some(i + 1);
                    }
                }
                b']' | b'}' => brackets = brackets.saturating_sub(1),
                _ => {}
            }
        }
    }
    None
}

fn check(name: &str, meta: &std::fs::Metadata) -> Result<(), String> {
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "a device, FIFO or socket"
        };
        return Err(format!(
            "cannot read {name}: it is {kind}, not a regular file; give a file"
        ));
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(too_large(name, meta.len()));
    }
    Ok(())
}

fn too_large(name: &str, len: u64) -> String {
    format!(
        "cannot read {name}: it has {len} bytes or more, above the limit of {MAX_INPUT_BYTES} bytes (256 MiB) for an input file"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_of_bounded_size_are_read() {
        let e = read(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(
            e,
            "cannot read /dev/zero: it is a device, FIFO or socket, not a regular file; give a file"
        );
        let e = read(Path::new("/")).unwrap_err();
        assert!(e.contains("it is a directory"), "{e}");
        let e = read(Path::new("/nonexistent/x.toml")).unwrap_err();
        assert!(e.starts_with("cannot read /nonexistent/x.toml: "), "{e}");
        assert!(too_large("f", 1 << 30).contains("limit of 268435456 bytes"));
        let d = std::env::temp_dir().join(format!("planner-input-{}", std::process::id()));
        std::fs::write(&d, b"ok \xff").unwrap();
        let e = read(&d).unwrap_err();
        std::fs::remove_file(&d).unwrap();
        assert!(
            e.ends_with("byte 3 is not UTF-8 text; give a text file"),
            "{e}"
        );
    }

    /// Issue 31: a FIFO is refused without waiting for a writer; a file
    /// above the size limit is refused from its length, before a byte is
    /// read (a sparse file, so that the test writes nothing).
    #[test]
    fn fifos_and_oversized_files_are_refused_naming_file_and_limit() {
        let dir = std::env::temp_dir().join(format!("planner-input-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("in.yaml");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let start = std::time::Instant::now();
        let e = read(&fifo).unwrap_err();
        assert!(start.elapsed().as_secs() < 2);
        assert_eq!(
            e,
            format!(
                "cannot read {}: it is a device, FIFO or socket, not a regular file; give a file",
                fifo.display()
            )
        );
        let big = dir.join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(MAX_INPUT_BYTES + 1).unwrap();
        let e = read(&big).unwrap_err();
        assert_eq!(
            e,
            format!(
                "cannot read {}: it has 268435457 bytes or more, above the limit of 268435456 bytes (256 MiB) for an input file",
                big.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn depth_line(text: &str) -> Option<usize> {
        nesting(text, MAX_NESTING)
    }

    /// Issue 31: 600 KB nested 100,000 levels, in every way YAML, JSON and
    /// TOML nest, is refused at once, naming the line; files of the
    /// toolkit's depth pass.
    #[test]
    fn deep_nesting_is_refused_before_any_parser() {
        let n = 100_000;
        let cases = [
            ("flow sequences", "[".repeat(n) + &"]".repeat(n)),
            ("flow mappings", "{a: ".repeat(n) + "1" + &"}".repeat(n)),
            ("compact sequences", "- ".repeat(n) + "x\n"),
            ("explicit keys", "? ".repeat(n) + "x\n"),
            ("json", "{\"a\":".repeat(n) + "1" + &"}".repeat(n)),
            ("toml", "a = ".to_string() + &"[".repeat(n) + &"]".repeat(n)),
            (
                "indentation",
                (0..2_000)
                    .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
                    .collect(),
            ),
        ];
        for (what, text) in cases {
            let start = std::time::Instant::now();
            let e = check_nesting(&text, "deep.yaml").unwrap_err();
            assert!(start.elapsed().as_millis() < 500, "{what}");
            assert!(
                e.starts_with("cannot read deep.yaml: line ")
                    && e.contains("nested more than 128 levels deep, the limit for an input file"),
                "{what}: {e}"
            );
        }
        // The line is the first one past the limit.
        let indented: String = (0..200)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect();
        assert_eq!(depth_line(&indented), Some(130));
        // At the limit passes; one more is refused.
        assert_eq!(depth_line(&"[".repeat(128)), None);
        assert_eq!(depth_line(&"[".repeat(129)), Some(1));
        assert_eq!(depth_line(&("- ".repeat(128) + "x")), None);
        // Closing brackets and lower indentation give levels back; JSON's
        // own indentation inside brackets adds none.
        let wide = "[[[]]]\n".repeat(10_000);
        assert_eq!(depth_line(&wide), None);
        let pretty =
            serde_json::to_string_pretty(&serde_json::json!({"a": {"b": {"c": [1, {"d": [2]}]}}}))
                .unwrap();
        assert_eq!(nesting(&pretty, 6), None);
        assert_eq!(nesting(&pretty, 5), Some(7));
        let yaml = "a:\n  b:\n  - c: 1\n    d:\n      - - x\n# [[[[\nz: 2\n";
        assert_eq!(nesting(yaml, 5), None);
        assert_eq!(nesting(yaml, 4), Some(5));
    }
}
