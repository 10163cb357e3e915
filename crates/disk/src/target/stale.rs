//! The test files of killed runs: found by their exact name, owner, mode
//! and kind, and removed only when nobody holds their lock and the name
//! still leads to the file that was checked.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags};

use super::identity::open_no_symlinks;
use super::naming::{is_test_file_name, TEST_FILE_MODE};

/// Remove test files in `dir` left by killed runs. Files of runs still
/// going (locked) are left alone, and so is anything iomark would not have
/// made: another name, another owner, another mode, not a regular file.
/// Returns what was removed.
pub fn remove_stale_test_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let resolved = std::fs::canonicalize(dir)?;
    let fd = open_no_symlinks(&resolved, OFlags::RDONLY | OFlags::DIRECTORY)
        .map_err(|e| io::Error::other(e.to_string()))?;
    remove_stale_in(&fd, dir)
}

pub(super) fn remove_stale_in(dir: &OwnedFd, shown_as: &Path) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let names: Vec<CString> = rustix::fs::Dir::read_from(dir)?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_owned())
        .filter(|n| is_test_file_name(n.as_bytes()))
        .collect();
    for name in names {
        if remove_if_stale(dir, &name)? {
            removed.push(shown_as.join(OsStr::from_bytes(name.as_bytes())));
        }
    }
    Ok(removed)
}

/// Remove one candidate if it is iomark's and nobody holds its lock.
fn remove_if_stale(dir: &OwnedFd, name: &CStr) -> io::Result<bool> {
    let looks_ours = |st: &rustix::fs::Stat| {
        FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
            && st.st_uid == rustix::process::geteuid().as_raw()
            && st.st_mode & 0o7777 == TEST_FILE_MODE
    };
    let Ok(before) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
        return Ok(false);
    };
    if !looks_ours(&before) {
        return Ok(false);
    }
    // Read-write: a stale file is emptied before its name goes (below).
    let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::openat(dir, name, flags, Mode::empty()) else {
        return Ok(false);
    };
    let opened = rustix::fs::fstat(&fd)?;
    if opened.st_dev != before.st_dev || opened.st_ino != before.st_ino || !looks_ours(&opened) {
        return Ok(false);
    }
    if rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err() {
        return Ok(false);
    }
    // Under our lock now; remove the name only while it still leads here.
    let still = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if still.st_dev != opened.st_dev || still.st_ino != opened.st_ino {
        return Ok(false);
    }
    // Emptied first: the killed run's io_uring ring may still hold the file
    // for seconds while the kernel tears it down, and the blocks of an
    // unlinked file are freed only when the last reference goes, so the
    // space would not be there for the run about to judge it.
    rustix::fs::ftruncate(&fd, 0)?;
    rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
    Ok(true)
}
