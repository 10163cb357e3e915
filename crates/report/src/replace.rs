//! Output files replaced whole or not at all: a report written over the
//! last one on a full file system must leave the last one, not half of
//! the new one.
//!
//! Each file is written to a temporary file beside it (same directory,
//! so the same file system), flushed to the disk, and only when every one
//! of a set is written are they renamed over their targets. A failure
//! removes the temporaries and leaves every target as it was.

use std::fs::{File, Permissions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// Why a set of files was not replaced: the file it stopped at and what the
/// system said.
#[derive(Debug)]
pub struct ReplaceError {
    /// The file being written when it failed.
    pub path: PathBuf,
    /// What failed.
    pub cause: std::io::Error,
    /// How many targets had already been replaced, each whole: none unless
    /// a rename failed part-way through the set, all when it was flushing
    /// their directory that failed.
    pub replaced: usize,
}

impl ReplaceError {
    /// Whether it failed because the file system (or the user's quota on
    /// it) is full.
    pub fn is_full(&self) -> bool {
        matches!(self.cause.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
    }

    /// The one line for a person: what failed, what became of the
    /// `targets` (one file, or a set: `the PNGs in charts/`), and, when the
    /// file system is full, what to do.
    pub fn explain(&self, targets: &Targets) -> String {
        let left = match (targets, self.replaced) {
            (Targets::One(path), 0) => format!("{} is unchanged", path.display()),
            (Targets::One(path), _) => format!(
                "{} was replaced, but may not survive a crash",
                path.display()
            ),
            (Targets::Set { each, .. }, 0) => format!("every {each} is unchanged"),
            (Targets::Set { all, count, .. }, n) if n == *count => {
                format!("{all} were replaced, but may not survive a crash")
            }
            (Targets::Set { all, count, .. }, n) => format!(
                "{n} of {all} ({count}) were replaced, each whole, the others are unchanged"
            ),
        };
        let path = self.path.display();
        if self.is_full() {
            format!(
                "cannot write {path}: the file system is full ({}); {left}: free some space \
                 there or write the report to another file system",
                self.cause
            )
        } else {
            format!("cannot write {path}: {}; {left}", self.cause)
        }
    }
}

/// What a [`replace_all`] was to replace, for [`ReplaceError::explain`].
#[derive(Debug, Clone)]
pub enum Targets {
    /// One file.
    One(PathBuf),
    /// A set of files: `each` names one of them (`PNG in charts/`), `all`
    /// the set (`the PNGs in charts/`).
    Set {
        /// One of them, after "every".
        each: String,
        /// All of them.
        all: String,
        /// How many.
        count: usize,
    },
}

/// Writes every `(path, contents)` of `files`, each whole or not at all;
/// see the module's description. A path that names something other than a
/// regular file (`/dev/stdout`, a pipe) is written to directly: it cannot
/// be replaced, and renaming over a device would remove it. A symbolic link
/// is followed, so the file it names is replaced and the link stays.
pub fn replace_all(files: &[(PathBuf, Vec<u8>)]) -> Result<(), ReplaceError> {
    let mut staged = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        let failed = |cause| ReplaceError {
            path: path.clone(),
            cause,
            replaced: 0,
        };
        let target = resolve(path);
        match std::fs::metadata(&target) {
            Ok(m) if !m.is_file() => {
                std::fs::write(&target, bytes).map_err(failed)?;
                continue;
            }
            Ok(m) => staged.push((
                stage(&target, bytes, Some(m.permissions())).map_err(failed)?,
                target,
            )),
            Err(_) => staged.push((stage(&target, bytes, None).map_err(failed)?, target)),
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for (i, (tmp, target)) in staged.into_iter().enumerate() {
        tmp.persist(&target).map_err(|e| ReplaceError {
            path: target.clone(),
            cause: system_error(e.error),
            replaced: i,
        })?;
        let dir = parent(&target).to_path_buf();
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    // The renames themselves reach the disk only with their directory.
    for dir in dirs {
        File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|cause| ReplaceError {
                path: dir,
                cause,
                replaced: files.len(),
            })?;
    }
    Ok(())
}

/// `bytes` in a new temporary file beside `target`, on the disk, with the
/// mode `target` has (a new file's mode is 0666 less the umask, as
/// `std::fs::write` would give it). The file is removed when dropped
/// before it is persisted.
fn stage(target: &Path, bytes: &[u8], mode: Option<Permissions>) -> std::io::Result<NamedTempFile> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(Permissions::from_mode(0o666))
        .tempfile_in(parent(target))
        .map_err(system_error)?;
    // Through the File: NamedTempFile's own writes wrap the error with the
    // temporary's name, which says nothing to the user and hides the errno.
    let file = tmp.as_file_mut();
    if let Some(mode) = mode {
        file.set_permissions(mode)?;
    }
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(tmp)
}

/// The system's error inside one tempfile wrapped with a path (the
/// temporary's, of no use in a message), so its errno can be read.
fn system_error(e: std::io::Error) -> std::io::Error {
    if e.raw_os_error().is_some() {
        return e;
    }
    let errno = e
        .get_ref()
        .and_then(|inner| std::error::Error::source(inner))
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .and_then(std::io::Error::raw_os_error);
    errno.map_or(e, std::io::Error::from_raw_os_error)
}

/// The file `path` names: a symbolic link's target (a dangling link is
/// replaced itself).
fn resolve(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// The directory `path` is in (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_replaced_with_their_mode_and_links_followed() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.html");
        std::fs::write(&a, "old").unwrap();
        std::fs::set_permissions(&a, Permissions::from_mode(0o640)).unwrap();
        let real = dir.path().join("real.png");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.png");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let new = dir.path().join("new.png");
        replace_all(&[
            (a.clone(), b"new a".to_vec()),
            (link.clone(), b"new link".to_vec()),
            (new.clone(), b"new".to_vec()),
        ])
        .unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"new a");
        let mode = std::fs::metadata(&a).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        assert_eq!(std::fs::read(&real).unwrap(), b"new link");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&new).unwrap(), b"new");
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["a.html", "link.png", "new.png", "real.png"]);
    }

    #[test]
    fn a_device_is_written_not_replaced() {
        replace_all(&[(PathBuf::from("/dev/null"), b"x".to_vec())]).unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    }

    #[test]
    fn a_set_that_fails_leaves_every_target_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.png");
        std::fs::write(&a, "old").unwrap();
        // The second file's directory does not exist: nothing is replaced.
        let err = replace_all(&[
            (a.clone(), b"new".to_vec()),
            (dir.path().join("none/b.png"), b"new".to_vec()),
        ])
        .unwrap_err();
        assert!(err.path.ends_with("none/b.png"), "{err:?}");
        assert!(!err.is_full() && err.replaced == 0);
        assert_eq!(std::fs::read(&a).unwrap(), b"old");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
