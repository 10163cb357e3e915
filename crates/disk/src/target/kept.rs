//! The test file a verify write phase keeps in a directory for a later
//! read phase (`iomark-verify-<16 hex>.dat`): found by name for the read
//! phase, and removed after it only while its name still leads to the
//! file that was read.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, OFlags};

use super::identity::open_no_symlinks;
use super::test_file::is_kept_name;
use super::{OpenTarget, TargetKind};
use crate::DiskError;

/// The kept verify file in `dir`; an error naming the fix when there is
/// none or more than one.
pub(crate) fn find_kept_verify_file(dir: &Path) -> Result<PathBuf, DiskError> {
    let resolved = std::fs::canonicalize(dir)
        .map_err(|e| DiskError::target(dir, format!("cannot be resolved: {e}")))?;
    let fd = open_no_symlinks(&resolved, OFlags::RDONLY | OFlags::DIRECTORY)?;
    let mut found: Vec<PathBuf> = rustix::fs::Dir::read_from(&fd)
        .map_err(|e| DiskError::target(dir, format!("cannot list the directory: {e}")))?
        .filter_map(Result::ok)
        .filter(|e| is_kept_name(e.file_name().to_bytes()))
        .map(|e| resolved.join(std::ffi::OsStr::from_bytes(e.file_name().to_bytes())))
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(DiskError::target(
            dir,
            "holds no iomark verify blocks (no iomark-verify-*.dat): \
             run --profile verify --phase write on it first",
        )),
        _ => Err(DiskError::target(
            dir,
            format!(
                "holds {} kept verify files ({}): name the one to read as PATH",
                found.len(),
                found
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Remove `target`, a kept verify file just read back, if its name is a
/// kept file's and still leads to the file that was read; whether it was
/// removed.
pub(crate) fn remove_kept_verify_file(target: &OpenTarget) -> Result<bool, DiskError> {
    let path = Path::new(&target.info.path);
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Ok(false);
    };
    if target.info.kind != TargetKind::File || !is_kept_name(name.as_bytes()) {
        return Ok(false);
    }
    let dir_fd = open_no_symlinks(dir, OFlags::RDONLY | OFlags::DIRECTORY)?;
    let opened = rustix::fs::fstat(&*target.file)
        .map_err(|e| DiskError::target(path, format!("cannot be inspected: {e}")))?;
    let named = rustix::fs::statat(&dir_fd, name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| DiskError::target(path, format!("cannot be inspected: {e}")))?;
    if named.st_dev != opened.st_dev || named.st_ino != opened.st_ino {
        return Ok(false);
    }
    rustix::fs::unlinkat(&dir_fd, name, AtFlags::empty())
        .map_err(|e| DiskError::target(path, format!("cannot be removed: {e}")))?;
    Ok(true)
}
