//! What iomark calls its test files, and the clean-up of those that killed
//! runs left: one place that disk's test files and mem's mapped files both
//! follow, so `iomark clean` and the next run find them all.
//!
//! A test file is named `iomark-` and 16 lowercase hex digits and `.tmp`,
//! created with `O_CREAT|O_EXCL|O_NOFOLLOW` and mode 0600, and holds an
//! exclusive `flock` for as long as its run lives. Clean-up takes exactly
//! such files, owned by the user, mode 0600, regular, unlocked, and checked
//! again under its own lock; it removes the name only while it still leads
//! to the file that was checked.

use std::ffi::{CStr, CString, OsStr};
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags};

/// Prefix of the test files iomark creates; 16 lowercase hex digits and
/// [`TEST_FILE_SUFFIX`] follow.
pub const TEST_FILE_PREFIX: &str = "iomark-";
/// Suffix of the test files iomark creates.
pub const TEST_FILE_SUFFIX: &str = ".tmp";
/// The mode iomark gives its test files; stale-file clean-up removes only
/// files with exactly this mode.
pub const TEST_FILE_MODE: u32 = 0o600;

/// `iomark-` followed by exactly 16 lowercase hex digits and `.tmp`: the
/// names iomark gives its test files, and the only ones clean-up touches.
pub fn is_test_file_name(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(TEST_FILE_PREFIX.as_bytes()) else {
        return false;
    };
    let Some(hex) = rest.strip_suffix(TEST_FILE_SUFFIX.as_bytes()) else {
        return false;
    };
    hex.len() == 16 && hex.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// A new test-file name: the prefix, 16 random hex digits, the suffix.
/// Random enough for `O_EXCL` to settle the rare clash.
pub fn new_test_file_name() -> CString {
    // std's per-process random hash keys, without a random-number crate.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    CString::new(format!(
        "{TEST_FILE_PREFIX}{:016x}{TEST_FILE_SUFFIX}",
        h.finish()
    ))
    .expect("a name of ASCII letters and digits has no NUL")
}

/// Remove the test files of killed runs in the directory `dir` (shown as
/// `shown_as`): exact name, owner, mode and kind, and nobody holding the
/// lock. Returns what was removed.
pub fn remove_stale_in(dir: &OwnedFd, shown_as: &Path) -> io::Result<Vec<PathBuf>> {
    Ok(sweep_in(dir, shown_as)?.removed)
}

/// What a sweep of a directory did with the files named as test files.
#[derive(Debug, Default)]
pub struct Sweep {
    /// Removed: files of killed runs.
    pub removed: Vec<PathBuf>,
    /// Left alone, each with why.
    pub kept: Vec<(PathBuf, &'static str)>,
}

/// [`remove_stale_in`], also saying which files named as test files were
/// kept and why (for `iomark clean`).
pub fn sweep_in(dir: &OwnedFd, shown_as: &Path) -> io::Result<Sweep> {
    let mut sweep = Sweep::default();
    let names: Vec<CString> = rustix::fs::Dir::read_from(dir)?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_owned())
        .filter(|n| is_test_file_name(n.as_bytes()))
        .collect();
    for name in names {
        let path = shown_as.join(OsStr::from_bytes(name.as_bytes()));
        match remove_if_stale(dir, &name)? {
            Found::Stale => sweep.removed.push(path),
            Found::Kept(why) => sweep.kept.push((path, why)),
            Found::Gone => {}
        }
    }
    Ok(sweep)
}

/// What became of one file named as a test file.
enum Found {
    /// A killed run's: removed.
    Stale,
    /// Left alone, and why.
    Kept(&'static str),
    /// Gone or replaced while it was looked at: nothing to say.
    Gone,
}

/// Why a file was kept while a run holds it.
const IN_USE: &str =
    "in use by a running or just-ended iomark (its lock is held); try again in a few seconds";
/// Why a file with a test file's name was kept although no run holds it.
const NOT_OURS: &str =
    "not a file iomark made: its owner, mode or kind is not a test file's (remove it yourself if it is yours)";

/// Remove one candidate if it is iomark's and nobody holds its lock.
fn remove_if_stale(dir: &OwnedFd, name: &CStr) -> io::Result<Found> {
    let looks_ours = |st: &rustix::fs::Stat| {
        FileType::from_raw_mode(st.st_mode) == FileType::RegularFile
            && st.st_uid == rustix::process::geteuid().as_raw()
            && st.st_mode & 0o7777 == TEST_FILE_MODE
    };
    let Ok(before) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
        return Ok(Found::Gone);
    };
    if !looks_ours(&before) {
        return Ok(Found::Kept(NOT_OURS));
    }
    // Read-write: a stale file is emptied before its name goes (below).
    let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        // Active swap refuses to be opened for writing.
        Err(rustix::io::Errno::TXTBSY) => return Ok(Found::Kept(IN_USE)),
        Err(_) => return Ok(Found::Gone),
    };
    let opened = rustix::fs::fstat(&fd)?;
    if opened.st_dev != before.st_dev || opened.st_ino != before.st_ino || !looks_ours(&opened) {
        return Ok(Found::Gone);
    }
    if rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err() {
        return Ok(Found::Kept(IN_USE));
    }
    // Under our lock now; remove the name only while it still leads here.
    let still = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if still.st_dev != opened.st_dev || still.st_ino != opened.st_ino {
        return Ok(Found::Gone);
    }
    // Emptied first: the killed run's io_uring ring may still hold the file
    // for seconds while the kernel tears it down, and the blocks of an
    // unlinked file are freed only when the last reference goes, so the
    // space would not be there for the run about to judge it.
    rustix::fs::ftruncate(&fd, 0)?;
    rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
    Ok(Found::Stale)
}
