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
//!
//! Between a file's creation and its lock there is a moment when it looks
//! exactly like a killed run's. So the directory is locked too: a run holds
//! a shared `flock` on the directory from before it creates its file until
//! the file is locked ([`create_locked`]), and a sweep holds an exclusive
//! one while it looks ([`sweep_in`]). Ranks of one MPI job starting in one
//! directory each sweep it while the others create their files; without
//! this one removed another's new file.

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
    let _no_file_half_made = DirLock::take(dir, FlockOperation::LockExclusive)?;
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

/// A step of [`create_locked`] that failed, with the error it met.
#[derive(Debug, thiserror::Error)]
#[error("cannot {step}: {source}")]
pub struct CreateError {
    /// What could not be done: "create a test file", "set its mode",
    /// "lock the test file".
    pub step: &'static str,
    /// The error the step met.
    #[source]
    pub source: io::Error,
}

/// Create the test file `name` in `dir` (`O_EXCL`, no symbolic link, mode
/// 0600 whatever the umask) and take its lock, all before any sweep can
/// look at it. On an error nothing is left: a file made before the error
/// is removed.
pub fn create_locked(
    dir: &OwnedFd,
    name: impl rustix::path::Arg + Copy,
) -> Result<OwnedFd, CreateError> {
    let failed = |step| {
        move |e: rustix::io::Errno| CreateError {
            step,
            source: e.into(),
        }
    };
    let _no_sweep_looks =
        DirLock::take(dir, FlockOperation::LockShared).map_err(|source| CreateError {
            step: "lock its directory",
            source,
        })?;
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(TEST_FILE_MODE),
    )
    .map_err(failed("create a test file"))?;
    // The umask may have taken bits away; clean-up recognises exactly this.
    let set_up = rustix::fs::fchmod(&fd, Mode::from_raw_mode(TEST_FILE_MODE))
        .map_err(failed("set its mode"))
        .and_then(|()| {
            rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive)
                .map_err(failed("lock the test file"))
        });
    if let Err(e) = set_up {
        // Ours, made a moment ago under the directory's lock.
        let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
        return Err(e);
    }
    Ok(fd)
}

/// A `flock` on a directory, released when dropped.
struct DirLock<'a>(Option<&'a OwnedFd>);

impl<'a> DirLock<'a> {
    /// Take `how` on `dir`, waiting for it. A file system that cannot lock
    /// a directory (NFS emulates `flock` with byte-range locks, which a
    /// directory cannot take) gets no lock: there the moment between a
    /// file's creation and its lock stays open, as it is for any tool.
    fn take(dir: &'a OwnedFd, how: FlockOperation) -> io::Result<Self> {
        loop {
            match rustix::fs::flock(dir, how) {
                Ok(()) => return Ok(Self(Some(dir))),
                Err(rustix::io::Errno::INTR) => continue,
                Err(
                    rustix::io::Errno::BADF
                    | rustix::io::Errno::NOLCK
                    | rustix::io::Errno::OPNOTSUPP
                    | rustix::io::Errno::INVAL,
                ) => return Ok(Self(None)),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Drop for DirLock<'_> {
    fn drop(&mut self) {
        if let Some(dir) = self.0 {
            let _ = rustix::fs::flock(dir, FlockOperation::Unlock);
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn open_dir(path: &Path) -> OwnedFd {
        rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap()
    }

    /// Whether the kernel lists a request waiting for a `flock` on the
    /// file `meta` describes.
    fn flock_waiter_on(meta: &std::fs::Metadata) -> bool {
        iomark_testrig::kernel_locks()
            .iter()
            .any(|l| l.waiting && l.class == "FLOCK" && l.is_on(meta))
    }

    #[test]
    fn a_sweep_waits_while_a_file_is_between_its_creation_and_its_lock() {
        let tmp = tempfile::tempdir().unwrap();
        let name = new_test_file_name();
        let creator_dir = open_dir(tmp.path());
        // The creator's moment: the directory's shared lock held, the file
        // made and not locked yet; a killed run's file looks the same.
        let held = DirLock::take(&creator_dir, FlockOperation::LockShared).unwrap();
        let fd = rustix::fs::openat(
            &creator_dir,
            name.as_c_str(),
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
            Mode::from_raw_mode(TEST_FILE_MODE),
        )
        .unwrap();
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(TEST_FILE_MODE)).unwrap();
        let path = tmp.path().to_path_buf();
        let sweeper = std::thread::spawn(move || sweep_in(&open_dir(&path), &path).unwrap());
        // The sweep must be waiting for the directory (seen in /proc/locks)
        // before the creator goes on; had it not waited, it has ended.
        let dir_meta = std::fs::metadata(tmp.path()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !sweeper.is_finished() && !flock_waiter_on(&dir_meta) {
            assert!(
                Instant::now() < deadline,
                "the sweep neither ended nor waited"
            );
            std::thread::yield_now();
        }
        assert!(
            !sweeper.is_finished(),
            "the sweep did not wait for the file being made"
        );
        rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).unwrap();
        drop(held);
        let sweep = sweeper.join().unwrap();
        assert!(sweep.removed.is_empty(), "{sweep:?}");
        assert_eq!(sweep.kept.len(), 1, "{sweep:?}");
        assert_eq!(sweep.kept[0].1, IN_USE);
        assert!(tmp.path().join(name.to_str().unwrap()).exists());
    }

    #[test]
    fn a_made_file_is_kept_while_its_run_lives_and_removed_after() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path());
        let name = new_test_file_name();
        let fd = create_locked(&dir, &name).unwrap();
        let st = rustix::fs::fstat(&fd).unwrap();
        assert_eq!(st.st_mode & 0o7777, TEST_FILE_MODE);
        // A second run's sweep, through its own descriptor of the directory.
        let sweep = sweep_in(&open_dir(tmp.path()), tmp.path()).unwrap();
        assert_eq!(sweep.kept.len(), 1, "{sweep:?}");
        assert!(sweep.removed.is_empty());
        // Killed: its descriptor, and with it its lock, goes.
        drop(fd);
        let removed = remove_stale_in(&open_dir(tmp.path()), tmp.path()).unwrap();
        assert_eq!(removed, vec![tmp.path().join(name.to_str().unwrap())]);
        // A name that is taken is refused, and nothing is removed for it.
        std::fs::write(tmp.path().join(name.to_str().unwrap()), b"theirs").unwrap();
        let e = create_locked(&dir, &name).unwrap_err();
        assert_eq!(e.step, "create a test file");
        assert_eq!(
            std::fs::read(tmp.path().join(name.to_str().unwrap())).unwrap(),
            b"theirs"
        );
    }
}
