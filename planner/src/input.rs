//! The one place an input file is read, by both binaries: only a regular file (a device such as `/dev/zero`, a FIFO or a directory is refused before it is opened for reading), of at most [`MAX_INPUT_BYTES`], as UTF-8; every refusal names the file and the limit.

use std::io::Read as _;
use std::path::Path;

/// The most bytes an input file may have: 256 MiB, far above the largest
/// plan the toolkit writes (a 4,096-server plan is under 40 MiB) and far
/// below what would strain a machine's memory.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// Reads the input file `path` whole; the error is a sentence naming the
/// file and what to give instead.
pub fn read(path: &Path) -> Result<String, String> {
    let name = path.display();
    let cannot = |e: std::io::Error| format!("cannot read {name}: {e}");
    // Look before opening: opening a FIFO for reading waits for a writer.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    check(&name.to_string(), &meta)?;
    let file = std::fs::File::open(path).map_err(cannot)?;
    // And again on what was opened, in case the path changed meanwhile.
    check(&name.to_string(), &file.metadata().map_err(cannot)?)?;
    let mut bytes = Vec::new();
    file.take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large(&name.to_string(), bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "cannot read {name}: byte {} is not UTF-8 text; give a text file",
            e.utf8_error().valid_up_to()
        )
    })
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
}
