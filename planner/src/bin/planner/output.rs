//! Output files and directories, written transactionally: every target is
//! checked before any work, every file is written into a temporary beside
//! its target, and the files of one command are put in place together or
//! not at all (`commit`).
//!
//! Kills: on Linux a file's bytes go into an unnamed temporary
//! (`O_TMPFILE`) that the kernel frees when the process dies for any
//! reason, SIGKILL included, so a killed `design --out` leaves nothing. The
//! only named temporaries, `.planner-<pid>-<random>.tmp`, live for the
//! instant between a link and a rename, or are `render`'s sibling
//! directory while it is filled; the next run that writes in the same
//! directory removes those whose process is gone.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

use anyhow::Result;
use tempfile::{Builder, TempDir, TempPath};

use crate::io::{BadInput, display};

/// Every temporary name starts with this (then the process id).
const PREFIX: &str = ".planner-";
/// And ends with this.
const SUFFIX: &str = ".tmp";

/// A checked output file: where its bytes finally go.
#[derive(Debug, Clone)]
pub struct FileTarget {
    /// The path as the user gave it, for messages.
    given: PathBuf,
    /// The file replaced: `given` with symbolic links followed, so a link
    /// is written through and stays a link.
    real: PathBuf,
}

/// A checked output directory.
#[derive(Debug, Clone)]
pub struct DirTarget {
    given: PathBuf,
    /// Absolute, with symbolic links followed.
    real: PathBuf,
}

/// Written, not yet in place.
#[derive(Debug)]
pub struct Staged(StagedKind);

#[derive(Debug)]
enum StagedKind {
    File { target: FileTarget, temp: Temp },
    Dir { target: DirTarget, temp: TempDir },
}

/// A file's bytes before they are linked into place.
#[derive(Debug)]
struct Temp {
    file: File,
    /// The temporary's name; `None` for an unnamed (`O_TMPFILE`) file,
    /// which has a name only from `place` on.
    path: Option<TempPath>,
}

/// In place, with what `undo` needs to put the old state back.
#[derive(Debug)]
enum Placed {
    File {
        real: PathBuf,
        /// A hard link to the replaced file, when there was one.
        backup: Option<TempPath>,
    },
    Dir {
        real: PathBuf,
        /// After the swap: the old directory (dropping it removes it), or
        /// the empty name the new one came from when there was none.
        temp: TempDir,
        swapped: bool,
    },
}

/// Checks `path` as the output file of `flag`: its extension is one of
/// `extensions` (the extension chooses the format, so a mismatch is
/// refused), its directory exists, and it is not a directory or a special
/// file. Removes stale temporaries of killed runs beside it.
pub fn file_target(path: &Path, flag: &str, extensions: &[&str], what: &str) -> Result<FileTarget> {
    let real = follow(path, flag)?;
    let named = named_as(flag, path, &real);
    match fs::metadata(&real) {
        Ok(m) if m.is_dir() => {
            return Err(BadInput(format!(
                "{named} is a directory; give a file name, e.g. {}",
                display(&path.join(format!("name.{}", extensions[0])))
            ))
            .into());
        }
        Ok(m) if !m.is_file() => {
            return Err(BadInput(format!(
                "{named} is a {}, not a regular file; planner never replaces special files: give the path of a regular file",
                special_kind(&m)
            ))
            .into());
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(BadInput(format!("cannot write {named}: {e}")).into()),
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !ext.as_deref().is_some_and(|e| extensions.contains(&e)) {
        let wanted = extensions
            .iter()
            .map(|e| format!(".{e}"))
            .collect::<Vec<_>>()
            .join(" or ");
        let got = match &ext {
            Some(e) => format!("ends in .{e}"),
            None => "has no extension".to_string(),
        };
        return Err(BadInput(format!(
            "{flag} {}: the name {got}, but {what} is written as {wanted} (the extension chooses the format); rename the file",
            display(path)
        ))
        .into());
    }
    let dir = parent_of(&real);
    if !dir.is_dir() {
        return Err(BadInput(format!(
            "{named}: directory {} does not exist; create it first",
            display(&dir)
        ))
        .into());
    }
    clean_stale(&dir);
    Ok(FileTarget {
        given: path.to_path_buf(),
        real,
    })
}

/// Checks `dir` as the output directory of `flag`: a directory or nothing
/// (it is created), never a file, and not the working directory or one
/// above it (the new directory replaces the old one whole). Removes stale
/// temporaries of killed runs beside it.
pub fn dir_target(dir: &Path, flag: &str) -> Result<DirTarget> {
    let real = follow(dir, flag)?;
    let named = named_as(flag, dir, &real);
    match fs::metadata(&real) {
        Ok(m) if m.is_dir() => {}
        Ok(m) if m.is_file() => {
            return Err(BadInput(format!(
                "{named} is a file, not a directory; give a directory to write the files into (it is created when missing)"
            ))
            .into());
        }
        Ok(m) => {
            return Err(BadInput(format!(
                "{named} is a {}, not a directory; give a directory to write the files into (it is created when missing)",
                special_kind(&m)
            ))
            .into());
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(BadInput(format!("cannot write into {named}: {e}")).into()),
    }
    let absolute =
        absolute(&real).map_err(|e| BadInput(format!("cannot write into {named}: {e}")))?;
    if absolute.file_name().is_none() {
        return Err(BadInput(format!(
            "{named}: give a directory of its own (e.g. {}), not the root",
            display(&dir.join("out"))
        ))
        .into());
    }
    if std::env::current_dir().is_ok_and(|cwd| cwd.starts_with(&absolute)) {
        return Err(BadInput(format!(
            "{named} is the working directory or holds it; the files land in a new directory that replaces it whole, so give a subdirectory, e.g. {}",
            display(&dir.join("out"))
        ))
        .into());
    }
    let parent = parent_of(&absolute);
    if parent.is_dir() {
        clean_stale(&parent);
    }
    Ok(DirTarget {
        given: dir.to_path_buf(),
        real: absolute,
    })
}

/// Writes a file into a temporary beside `target`: `fill` writes the
/// bytes. Nothing is visible until `commit`.
pub fn stage_file(
    target: &FileTarget,
    fill: impl FnOnce(&mut dyn std::io::Write) -> Result<()>,
) -> Result<Staged> {
    let dir = parent_of(&target.real);
    let mut temp = open_temp(&dir).map_err(|e| cannot_write(target, &e))?;
    let file = &mut temp.file;
    {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut *file);
        fill(&mut w).and_then(|()| Ok(w.flush()?)).map_err(|e| {
            // A write that failed is the place's fault (full, gone,
            // read-only); anything else is the program's.
            match e.chain().find_map(|c| c.downcast_ref::<std::io::Error>()) {
                Some(io) => cannot_write(target, io),
                None => e.context(format!("writing {}", display(&target.given))),
            }
        })?;
    }
    file.sync_all().map_err(|e| cannot_write(target, &e))?;
    // Temporary files are private (0600); the output keeps the mode of the
    // file it replaces, or is readable by others.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = fs::metadata(&target.real).map_or(0o644, |m| m.permissions().mode() & 0o777);
        file.set_permissions(fs::Permissions::from_mode(mode))
            .map_err(|e| cannot_write(target, &e))?;
    }
    Ok(Staged(StagedKind::File {
        target: target.clone(),
        temp,
    }))
}

/// Builds the new contents of `target` in a sibling temporary directory:
/// `files` (name and text), and every other entry of the old directory
/// (hard links, or copies where links cannot be made), so the swap in
/// `commit` changes only what this command writes.
pub fn stage_dir(target: &DirTarget, files: &[(String, String)]) -> Result<Staged> {
    let named = named_as("--out", &target.given, &target.real);
    let fail = |e: std::io::Error| BadInput(format!("cannot write into {named}: {e}"));
    for (name, _) in files {
        let mut parts = Path::new(name).components();
        if !matches!(
            (parts.next(), parts.next()),
            (Some(Component::Normal(_)), None)
        ) {
            return Err(BadInput(format!(
                "cannot write `{}` into {named}: a file name must not hold a path; rename the object it comes from",
                name.escape_debug()
            ))
            .into());
        }
        let old = target.real.join(name);
        if fs::symlink_metadata(&old).is_ok_and(|m| m.is_dir()) {
            return Err(BadInput(format!(
                "cannot write {}: it is a directory; remove it or render into another --out",
                display(&target.given.join(name))
            ))
            .into());
        }
    }
    let parent = parent_of(&target.real);
    fs::create_dir_all(&parent).map_err(|e| {
        BadInput(format!(
            "{named}: cannot create the directory {}: {e}",
            display(&parent)
        ))
    })?;
    let temp = Builder::new()
        .prefix(&temp_prefix())
        .suffix(SUFFIX)
        .tempdir_in(&parent)
        .map_err(fail)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = fs::metadata(&target.real).map_or(0o755, |m| m.permissions().mode() & 0o7777);
        fs::set_permissions(temp.path(), fs::Permissions::from_mode(mode)).map_err(fail)?;
    }
    for (name, text) in files {
        let mut f = File::create(temp.path().join(name)).map_err(fail)?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(fail)?;
    }
    if target.real.is_dir() {
        for entry in fs::read_dir(&target.real).map_err(fail)? {
            let entry = entry.map_err(fail)?;
            let name = entry.file_name();
            if files.iter().any(|(n, _)| name == n.as_str()) {
                continue;
            }
            carry(&entry.path(), &temp.path().join(&name)).map_err(fail)?;
        }
    }
    Ok(Staged(StagedKind::Dir {
        target: target.clone(),
        temp,
    }))
}

/// Puts every staged output in place, in order; when one fails, the ones
/// already placed are put back as they were and nothing has changed.
pub fn commit(staged: Vec<Staged>) -> Result<()> {
    let keep_backups = staged.len() > 1;
    let mut placed = Vec::with_capacity(staged.len());
    for s in staged {
        match place(s, keep_backups) {
            Ok(p) => placed.push(p),
            Err(e) => {
                for p in placed.into_iter().rev() {
                    undo(p);
                }
                return Err(e);
            }
        }
    }
    for p in placed {
        finish(p);
    }
    Ok(())
}

/// True when the two targets are the same file.
pub fn same_file(a: &FileTarget, b: &FileTarget) -> bool {
    let canon = |t: &FileTarget| absolute(&t.real).unwrap_or_else(|_| t.real.clone());
    canon(a) == canon(b)
}

impl FileTarget {
    pub fn given(&self) -> &Path {
        &self.given
    }
}

fn place(s: Staged, keep_backup: bool) -> Result<Placed> {
    match s.0 {
        StagedKind::File { target, temp } => {
            let dir = parent_of(&target.real);
            let fail = |e: std::io::Error| cannot_write(&target, &e);
            let named = match temp.path {
                Some(path) => path,
                None => link_unnamed(&temp.file, &dir).map_err(fail)?,
            };
            let backup = if keep_backup && target.real.is_file() {
                let made = Builder::new()
                    .prefix(&temp_prefix())
                    .suffix(SUFFIX)
                    .make_in(&dir, |p| fs::hard_link(&target.real, p))
                    .map_err(fail)?;
                Some(made.into_temp_path())
            } else {
                None
            };
            fs::rename(&named, &target.real).map_err(fail)?;
            // The name is the output's now; nothing to remove.
            named.keep().map_err(|e| fail(e.error))?;
            Ok(Placed::File {
                real: target.real,
                backup,
            })
        }
        StagedKind::Dir { target, temp } => {
            let named = named_as("--out", &target.given, &target.real);
            let fail = |e: std::io::Error| BadInput(format!("cannot write into {named}: {e}"));
            let swapped = target.real.exists();
            if swapped {
                exchange(temp.path(), &target.real).map_err(fail)?;
            } else {
                fs::rename(temp.path(), &target.real).map_err(fail)?;
            }
            Ok(Placed::Dir {
                real: target.real,
                temp,
                swapped,
            })
        }
    }
}

/// Puts back what `place` replaced (best effort: it runs on a failure path).
fn undo(p: Placed) {
    match p {
        Placed::File { real, backup } => match backup {
            Some(b) => {
                if fs::rename(&b, &real).is_ok() {
                    let _ = b.keep();
                }
            }
            None => {
                let _ = fs::remove_file(&real);
            }
        },
        Placed::Dir {
            real,
            temp,
            swapped,
        } => {
            let _ = if swapped {
                exchange(temp.path(), &real)
            } else {
                fs::rename(&real, temp.path())
            };
        }
    }
}

/// Removes what the commit no longer needs: backups and old directories.
fn finish(p: Placed) {
    match p {
        Placed::File { backup, .. } => drop(backup),
        Placed::Dir { temp, swapped, .. } => {
            if swapped {
                // The old directory, under the temporary name.
                drop(temp);
            } else {
                // The name was renamed away; there is nothing left to remove.
                let _ = temp.keep();
            }
        }
    }
}

/// A temporary file in `dir`: unnamed where the system can, else named.
fn open_temp(dir: &Path) -> std::io::Result<Temp> {
    #[cfg(target_os = "linux")]
    if Path::new("/proc/self/fd").is_dir() {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::WRONLY | OFlags::TMPFILE | OFlags::CLOEXEC;
        if let Ok(fd) = rustix::fs::open(dir, flags, Mode::from_bits_truncate(0o600)) {
            return Ok(Temp {
                file: File::from(fd),
                path: None,
            });
        }
    }
    let named = Builder::new()
        .prefix(&temp_prefix())
        .suffix(SUFFIX)
        .tempfile_in(dir)?;
    let (file, path) = named.into_parts();
    Ok(Temp {
        file,
        path: Some(path),
    })
}

/// Gives an unnamed temporary a temporary name in `dir`.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, dir: &Path) -> std::io::Result<TempPath> {
    use std::os::fd::AsRawFd as _;
    let proc_path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let linked = Builder::new()
        .prefix(&temp_prefix())
        .suffix(SUFFIX)
        .make_in(dir, |p| {
            rustix::fs::linkat(
                rustix::fs::CWD,
                proc_path.as_str(),
                rustix::fs::CWD,
                p,
                rustix::fs::AtFlags::SYMLINK_FOLLOW,
            )
            .map_err(std::io::Error::from)
        })?;
    Ok(linked.into_temp_path())
}

/// Without `O_TMPFILE` every temporary is named (`open_temp`).
#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: &File, _dir: &Path) -> std::io::Result<TempPath> {
    Err(std::io::Error::other(
        "unnamed temporaries exist only on Linux",
    ))
}

/// Swaps two directories: atomically on Linux, else with three renames.
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags};
        match rustix::fs::renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
            Ok(()) => return Ok(()),
            // The file system cannot exchange: fall back.
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let aside = parent_of(a).join(format!("{}swap{SUFFIX}", temp_prefix()));
    fs::rename(b, &aside)?;
    if let Err(e) = fs::rename(a, b) {
        let _ = fs::rename(&aside, b);
        return Err(e);
    }
    fs::rename(&aside, a)
}

/// Carries an entry of the old directory into the new one.
fn carry(from: &Path, to: &Path) -> std::io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        #[cfg(unix)]
        return std::os::unix::fs::symlink(fs::read_link(from)?, to);
        #[cfg(not(unix))]
        return fs::copy(from, to).map(|_| ());
    }
    if meta.is_dir() {
        fs::create_dir(to)?;
        fs::set_permissions(to, meta.permissions())?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            carry(&entry.path(), &to.join(entry.file_name()))?;
        }
        return Ok(());
    }
    match fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        Err(_) if meta.is_file() => fs::copy(from, to).map(|_| ()),
        Err(e) => Err(e),
    }
}

/// Removes temporaries left in `dir` by planner runs that were killed
/// (their process is gone), and names the ones it cannot tell about.
fn clean_stale(dir: &Path) {
    // Once per directory and run: --out and --cables often share one.
    static CLEANED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let key = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    {
        let mut cleaned = CLEANED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cleaned.contains(&key) {
            return;
        }
        cleaned.push(key);
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let can_tell = Path::new("/proc/self").exists();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let Some(rest) = name
            .strip_prefix(PREFIX)
            .and_then(|r| r.strip_suffix(SUFFIX))
        else {
            continue;
        };
        let path = entry.path();
        let pid = rest
            .split_once('-')
            .and_then(|(p, _)| p.parse::<u32>().ok());
        match pid {
            Some(pid) if pid == std::process::id() => {}
            Some(pid) if can_tell && !Path::new("/proc").join(pid.to_string()).exists() => {
                let removed = if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    fs::remove_dir_all(&path)
                } else {
                    fs::remove_file(&path)
                };
                match removed {
                    Ok(()) => eprintln!(
                        "note: removed {}, a temporary left by a planner run that was killed",
                        display(&path)
                    ),
                    Err(e) => eprintln!(
                        "note: {} is a temporary left by a planner run that was killed; it could not be removed ({e}): remove it",
                        display(&path)
                    ),
                }
            }
            Some(_) => {}
            None => eprintln!(
                "note: {} looks like a temporary left by a killed planner run; remove it when no planner is running",
                display(&path)
            ),
        }
    }
}

fn temp_prefix() -> String {
    format!("{PREFIX}{}-", std::process::id())
}

/// The directory holding `path` (`.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// `path` with every symbolic link of its last component followed (a
/// dangling link gives the path it points to).
fn follow(path: &Path, flag: &str) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).map_err(|e| {
                    BadInput(format!(
                        "{flag} {}: cannot read the link: {e}",
                        display(path)
                    ))
                })?;
                p = parent_of(&p).join(to);
            }
            _ => return Ok(p),
        }
    }
    Err(BadInput(format!(
        "{flag} {}: too many levels of symbolic links",
        display(path)
    ))
    .into())
}

/// An absolute form of `path`: canonical when it exists, else its
/// parent's canonical form joined with its name.
fn absolute(path: &Path) -> std::io::Result<PathBuf> {
    if path.exists() {
        return fs::canonicalize(path);
    }
    let name = path.file_name().map(PathBuf::from).unwrap_or_default();
    let parent = parent_of(path);
    if parent.exists() {
        Ok(fs::canonicalize(parent)?.join(name))
    } else {
        Ok(std::path::absolute(path)?)
    }
}

/// `--out FILE`, or `--out LINK (a symbolic link to FILE)`.
fn named_as(flag: &str, given: &Path, real: &Path) -> String {
    if given == real {
        format!("{flag} {}", display(given))
    } else {
        format!(
            "{flag} {} (a symbolic link to {})",
            display(given),
            display(real)
        )
    }
}

fn special_kind(m: &fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let t = m.file_type();
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_char_device() {
            return "character device";
        }
        if t.is_block_device() {
            return "block device";
        }
        if t.is_socket() {
            return "socket";
        }
    }
    let _ = m;
    "special file"
}

fn cannot_write(target: &FileTarget, e: &std::io::Error) -> anyhow::Error {
    let named = if target.given == target.real {
        display(&target.given)
    } else {
        format!(
            "{} (a symbolic link to {})",
            display(&target.given),
            display(&target.real)
        )
    };
    BadInput(format!("cannot write {named}: {e}")).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(text: &'static str) -> impl FnOnce(&mut dyn std::io::Write) -> Result<()> {
        move |w| Ok(w.write_all(text.as_bytes())?)
    }

    #[test]
    fn issue13_commit_rolls_back_when_a_later_output_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let a_dir = tmp.path().join("a");
        let b_dir = tmp.path().join("b");
        fs::create_dir(&a_dir).unwrap();
        fs::create_dir(&b_dir).unwrap();
        fs::write(a_dir.join("plan.json"), "old plan").unwrap();
        let a = file_target(&a_dir.join("plan.json"), "--out", &["json"], "a plan").unwrap();
        let b = file_target(&b_dir.join("cables.csv"), "--cables", &["csv"], "cables").unwrap();
        let staged = vec![
            stage_file(&a, fill("new plan")).unwrap(),
            stage_file(&b, fill("new cables")).unwrap(),
        ];
        // The second place disappears between writing and committing.
        fs::remove_dir_all(&b_dir).unwrap();
        let err = commit(staged).unwrap_err();
        assert!(err.downcast_ref::<BadInput>().is_some(), "{err:#}");
        assert!(format!("{err:#}").contains("cables.csv"), "{err:#}");
        assert_eq!(
            fs::read_to_string(a_dir.join("plan.json")).unwrap(),
            "old plan"
        );
        let left: Vec<_> = fs::read_dir(&a_dir).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "no backup or temporary left: {left:?}");
    }

    #[test]
    fn issue13_commit_rolls_back_a_new_file_and_a_swapped_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("cfg");
        fs::create_dir(&out).unwrap();
        fs::write(out.join("sw01.cfg"), "old").unwrap();
        let dir = dir_target(&out, "--out").unwrap();
        let gone = tmp.path().join("gone");
        fs::create_dir(&gone).unwrap();
        let new_file = file_target(&tmp.path().join("new.json"), "--out", &["json"], "a plan");
        let staged = vec![
            stage_dir(&dir, &[("sw01.cfg".to_string(), "new".to_string())]).unwrap(),
            stage_file(&new_file.unwrap(), fill("{}")).unwrap(),
            stage_file(
                &file_target(&gone.join("x.csv"), "--cables", &["csv"], "cables").unwrap(),
                fill("x"),
            )
            .unwrap(),
        ];
        fs::remove_dir_all(&gone).unwrap();
        assert!(commit(staged).is_err());
        assert_eq!(fs::read_to_string(out.join("sw01.cfg")).unwrap(), "old");
        let mut left: Vec<String> = fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .collect();
        left.sort();
        assert_eq!(left, ["cfg"], "the new file is gone, no temporary left");
    }

    #[test]
    fn issue13_stage_dir_refuses_names_that_hold_a_path() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = dir_target(&tmp.path().join("cfg"), "--out").unwrap();
        for name in ["../evil.cfg", "a/b.cfg", "/etc/x", ".", ""] {
            let err = stage_dir(&dir, &[(name.to_string(), String::new())]).unwrap_err();
            assert!(err.downcast_ref::<BadInput>().is_some(), "{name}: {err:#}");
        }
        assert!(!tmp.path().join("evil.cfg").exists());
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}
