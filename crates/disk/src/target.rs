//! Targets: a test file iomark creates, an existing file, or a block device;
//! and the rules that keep a benchmark from destroying data.
//!
//! Every decision is taken on an open descriptor, never on a name, so a
//! name swapped for a symbolic link between a check and a use changes
//! nothing:
//!
//! * The path the user typed is resolved once (symlinks followed, as the
//!   user meant them) and the result is opened with `O_PATH` under
//!   `RESOLVE_NO_SYMLINKS`: a link that appears in it afterwards makes the
//!   open fail instead of leading elsewhere. Its kind, the `--allow-write`
//!   match (device and inode numbers; `st_rdev` for devices) and the
//!   in-use checks are taken from `fstat` of that descriptor. The real open
//!   goes through `/proc/self/fd/N`, which leads to the same object, and is
//!   checked to have reached it.
//! * A directory gets a test file `iomark-<16 hex>.tmp`, created with
//!   `O_EXCL|O_NOFOLLOW` relative to the directory's descriptor and used
//!   through that one descriptor (O_DIRECT is switched on with `fcntl`, not
//!   by opening the name again). Free space and the job's I/O sizes are
//!   checked before it is created; it is preallocated and filled with the
//!   job's data (so reads never hit holes), and it is removed when
//!   [`OpenTarget`] is dropped, on success, error or interruption, but only
//!   if its name still leads to the inode iomark created. The file is
//!   `flock`ed for as long as it lives: a test file whose lock can be taken
//!   belongs to a run that was killed, and is removed by the next run in
//!   that directory or by `iomark clean`, if its name, owner and mode are
//!   exactly those iomark gives its files.
//! * An existing regular file or a block device is read freely; writing to
//!   it needs `--allow-write` naming it.
//! * A block device opened for writing is opened with `O_EXCL`, which the
//!   kernel refuses while anyone holds it, and that claim is kept for the
//!   whole run so nobody can mount it meanwhile. Writing is refused when
//!   the same bytes are reachable through something mounted, swapped on or
//!   held: a partition of it, a device stacked on it, a loop device over it
//!   or, for a loop device, over the same backing file
//!   ([`iomark_host::users_of`]). An existing file is refused likewise when
//!   a loop device over it is in use, or it is an active swap file.
//!
//! The module is split by concern:
//!
//! * `identity`: the path resolved and opened under `RESOLVE_NO_SYMLINKS`,
//!   `fstat` identities, reopening through `/proc/self/fd`, and what an
//!   open failure means for the user.
//! * `test_file`: creating, filling and removing iomark's own test file.
//! * `stale`: removing the test files of killed runs.
//! * `existing`: an existing file or block device: `--allow-write`, the
//!   exclusive open and the in-use checks.
//!
//! This file holds the request, the open target and what every kind of
//! target shares.

use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iomark_model::disk::{DataPattern, DiskTarget, TargetKind};
use iomark_model::units::Bytes;
use iomark_model::{Warning, WarningKind};
use rustix::fs::{FileType, OFlags};

use crate::DiskError;

mod discard;
mod existing;
mod identity;
mod kept;
mod naming;
mod stale;
mod test_file;
#[cfg(test)]
mod tests;

pub(crate) use kept::{find_kept_verify_file, remove_kept_verify_file};
pub use stale::{remove_stale_test_files, sweep_test_files, Sweep};

use existing::open_existing;
use identity::{
    allowed_objects, changed_while_opening, explain_open, open_no_symlinks, reopen, Identity,
};
use test_file::{open_test_file, TestFile};

/// Whether to bypass the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectMode {
    /// O_DIRECT where the file system supports it, buffered with a warning
    /// where it does not.
    Auto,
    /// O_DIRECT or an error.
    Direct,
    /// Through the page cache.
    Buffered,
}

impl DirectMode {
    /// `Some(true)`: direct or an error; `Some(false)`: buffered; `None`:
    /// direct where the file system can.
    pub(crate) fn from_choice(direct: Option<bool>) -> Self {
        match direct {
            Some(true) => DirectMode::Direct,
            Some(false) => DirectMode::Buffered,
            None => DirectMode::Auto,
        }
    }
}

/// How a new test file is made ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TestFilePrep {
    /// Preallocated and filled with the run's data before the jobs, so
    /// reads never hit holes; `default_size` without `--size`.
    #[default]
    Filled,
    /// Preallocated, never written before the jobs: for a test whose own
    /// writes are the measurement (a fill would spend a drive's write
    /// cache before the sustained-write test began). Without `--size` it
    /// takes the free space less the margin.
    Unwritten(FreeSpaceMargin),
}

/// What an unwritten test file leaves free when it takes the free space,
/// so the file system and everything else on it go on working: a share of
/// it, and at least a floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreeSpaceMargin {
    /// The share left free, as a divisor: 20 leaves 5%.
    pub(crate) divisor: u64,
    /// The least left free.
    pub(crate) at_least: Bytes,
    /// The file is a whole number of these.
    pub(crate) granule: Bytes,
}

impl FreeSpaceMargin {
    /// What is left free of `available`.
    fn leaves(self, available: Bytes) -> Bytes {
        Bytes((available.get() / self.divisor).max(self.at_least.get()))
    }

    /// The size of a file that takes `available` less the margin, in whole
    /// granules; 0 when the margin takes it all.
    fn file_size(self, available: Bytes) -> Bytes {
        let size = available.get().saturating_sub(self.leaves(available).get());
        Bytes(size / self.granule.get() * self.granule.get())
    }
}

/// What the user asked to run on.
#[derive(Debug, Clone)]
pub struct TargetRequest {
    /// A directory, a regular file or a block device.
    pub path: PathBuf,
    /// Size of the test file, or of the region of an existing target.
    pub size: Option<Bytes>,
    /// Test-file size when none is given.
    pub default_size: Bytes,
    /// Whether the jobs will write.
    pub write: bool,
    /// Existing files and devices the user allowed writes to.
    pub allow_write: Vec<PathBuf>,
    /// Page cache or not.
    pub direct: DirectMode,
    /// What a new test file is filled with.
    pub data: DataPattern,
    /// Seed for the fill.
    pub seed: u64,
    /// Every I/O size the jobs will use. With direct I/O each must be a
    /// multiple of the target's logical block size; this is checked before
    /// a test file is created, so a bad size costs no fill.
    pub io_sizes: Vec<Bytes>,
    /// How a new test file is made ready.
    pub prep: TestFilePrep,
}

/// An open target, ready for jobs. Dropping it removes a test file.
#[derive(Debug)]
pub struct OpenTarget {
    /// The descriptor every engine uses.
    pub(crate) file: Arc<File>,
    /// What the target is, for results.
    pub info: DiskTarget,
    /// Whether O_DIRECT is in effect.
    pub direct: bool,
    /// Whether it was opened for writing.
    pub(crate) writable: bool,
    /// Things worth knowing about how it was opened.
    pub warnings: Vec<Warning>,
    /// Stale test files of killed runs removed on the way.
    pub(crate) removed_stale: Vec<PathBuf>,
    /// Where the region starts in the file: 0, or one MPI rank's share of
    /// a shared file (`info.size` is then that share's length). Engines
    /// that map the file do not take it.
    pub region_base: Bytes,
    identity: Identity,
    // Held only for its Drop, which removes the test file.
    _test_file: Option<TestFile>,
    // Exclusive claims on the other block devices that reach the bytes
    // written (loop devices over the same file, a loop device's backing
    // device), held for the run so that none can be mounted meanwhile.
    _route: iomark_host::Route,
}

impl OpenTarget {
    /// Resolve, check and open a target; create and fill a test file when
    /// the path is a directory. `stop` aborts a long fill (Ctrl-C).
    pub fn open(req: &TargetRequest, stop: &AtomicBool) -> Result<Self, DiskError> {
        let resolved = std::fs::canonicalize(&req.path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => DiskError::target(
                &req.path,
                "does not exist: name an existing directory, file or block device",
            ),
            _ => DiskError::target(&req.path, format!("cannot be resolved: {e}")),
        })?;
        // What --allow-write names is taken now, with the target's path:
        // the object opened next must be one of these.
        let allowed = allowed_objects(&req.allow_write);
        let handle = open_no_symlinks(&resolved, OFlags::PATH)?;
        let identity = Identity::of(&handle)
            .map_err(|e| DiskError::target(&resolved, format!("cannot be inspected: {e}")))?;
        match identity.kind {
            FileType::Directory => {
                let dir = reopen(&handle, &identity, OFlags::RDONLY | OFlags::DIRECTORY)
                    .map_err(|e| explain_open(&resolved, false, e))?;
                open_test_file(req, &resolved, dir, stop)
            }
            FileType::BlockDevice => open_existing(
                req,
                &resolved,
                &handle,
                identity,
                &allowed,
                TargetKind::BlockDevice,
            ),
            FileType::RegularFile => open_existing(
                req,
                &resolved,
                &handle,
                identity,
                &allowed,
                TargetKind::File,
            ),
            // Only a name changed after it was resolved leads to a link.
            FileType::Symlink => Err(changed_while_opening(&resolved)),
            _ => Err(DiskError::target(
                &req.path,
                "is neither a directory, a regular file nor a block device",
            )),
        }
    }

    /// Whether a job with `engine` bypasses the page cache here: a file
    /// mapping goes through it whatever the descriptor's O_DIRECT says, so
    /// only the other engines bypass it, and only on a direct target.
    pub(crate) fn bypasses_cache(&self, engine: iomark_model::disk::EngineKind) -> bool {
        self.direct && !engine.is_mapped()
    }

    /// Drop the target's pages from the page cache, so buffered jobs start
    /// cold (fio's default `invalidate=1`). Block devices are flushed first.
    pub(crate) fn invalidate_cache(&self) {
        // Advice only: a file system that ignores it costs accuracy, not
        // correctness, and buffered runs carry a warning anyway.
        let _ = rustix::fs::fdatasync(&*self.file);
        let _ = rustix::fs::fadvise(&*self.file, 0, None, rustix::fs::Advice::DontNeed);
    }

    /// Keep the test file for a later verify read phase instead of
    /// removing it (`--profile verify --phase write` on a directory); its
    /// new path, or `None` when the target is no test file.
    pub(crate) fn keep_test_file(&mut self) -> Result<Option<PathBuf>, DiskError> {
        let Some(t) = &mut self._test_file else {
            return Ok(None);
        };
        let dir = Path::new(&self.info.path)
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let kept = t.keep(&dir)?;
        self.info.path = kept.display().to_string();
        self.info.kind = TargetKind::File;
        Ok(Some(kept))
    }

    /// Write the target's dirty pages to the device and wait (fdatasync).
    pub(crate) fn flush(&self) -> Result<(), DiskError> {
        rustix::fs::fdatasync(&*self.file).map_err(|e| DiskError::Io {
            errno: e.raw_os_error(),
            message: format!("fdatasync of {}: {e}", self.info.path),
        })
    }

    /// The target for a job's workers, each of which takes a descriptor of
    /// its own from it.
    pub(crate) fn engine_file(&self) -> TargetFile {
        TargetFile {
            shared: Arc::clone(&self.file),
            identity: self.identity,
        }
    }

    /// A second descriptor for the same object with other flags (O_SYNC,
    /// O_DIRECT), opened through `/proc/self/fd` and checked to be the same
    /// object: never by name. Writable only if the target is.
    pub(crate) fn reopen(&self, write: bool, extra: OFlags) -> Result<File, DiskError> {
        let access = if write && self.writable {
            OFlags::RDWR
        } else {
            OFlags::RDONLY
        };
        let fd = reopen(self.file.as_fd(), &self.identity, access | extra)
            .map_err(|e| explain_open(Path::new(&self.info.path), write, e))?;
        Ok(File::from(fd))
    }
}

/// The target as a job's workers see it: the one checked descriptor, from
/// which each worker takes a descriptor of its own ([`TargetFile::own`]).
///
/// A file description shared by many threads is a cache line they all
/// fight over: every `pread` on it takes and drops a reference on the one
/// `struct file`, and on 16 CPUs psync fell to half of fio's rate, which
/// opens the file once per job. A worker's own description is opened
/// through `/proc/self/fd` of the checked one and checked again to be the
/// same object, so every decision taken on the first descriptor holds; a
/// device stays held exclusively by the first for the whole run.
#[derive(Debug, Clone)]
pub(crate) struct TargetFile {
    shared: Arc<File>,
    identity: Identity,
}

impl TargetFile {
    /// `file`, as what it is now (`fstat`).
    #[cfg(test)]
    pub(crate) fn new(file: Arc<File>) -> Result<Self, DiskError> {
        let identity = Identity::of(&*file).map_err(|e| DiskError::Io {
            errno: e.raw_os_error().unwrap_or(0),
            message: format!("fstat of the target: {e}"),
        })?;
        Ok(TargetFile {
            shared: file,
            identity,
        })
    }

    /// A new open file description of the target for one worker, with the
    /// checked descriptor's access mode and I/O flags (O_DIRECT, O_SYNC,
    /// O_DSYNC) and O_NOATIME where allowed, never O_EXCL: the checked
    /// descriptor holds the device.
    pub(crate) fn own(&self) -> Result<File, DiskError> {
        let keep = OFlags::RWMODE | OFlags::DIRECT | OFlags::SYNC | OFlags::DSYNC | OFlags::NOATIME;
        let io_error = |e: std::io::Error| DiskError::Io {
            errno: e.raw_os_error().unwrap_or(0),
            message: format!("a worker's descriptor of the target: {e}"),
        };
        let flags = rustix::fs::fcntl_getfl(&*self.shared).map_err(|e| io_error(e.into()))?;
        let flags = flags & keep;
        // A read measures; it should not update the access time too (a
        // check, and at times an inode write, on every read), as fio does
        // for devices and t/io_uring for files. Only the owner or root may
        // ask (EPERM otherwise): then reads update it as they would anyway.
        let fd = match reopen(self.shared.as_fd(), &self.identity, flags | OFlags::NOATIME) {
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
                reopen(self.shared.as_fd(), &self.identity, flags)
            }
            opened => opened,
        }
        .map_err(io_error)?;
        Ok(File::from(fd))
    }
}

/// Refuse I/O sizes direct I/O cannot do on a device with logical block
/// size `lbs`.
fn check_io_sizes(req: &TargetRequest, lbs: u64, path: &Path) -> Result<(), DiskError> {
    if let Some(bs) = req.io_sizes.iter().find(|bs| !bs.get().is_multiple_of(lbs)) {
        return Err(DiskError::Invalid(format!(
            "--bs {bs} is not a multiple of the logical block size {lbs} B of {}: \
             direct I/O needs that; use a multiple of {lbs}, or --buffered",
            path.display()
        )));
    }
    Ok(())
}

fn no_direct_warning(path: &Path) -> Warning {
    Warning::new(
        WarningKind::BufferedIo,
        format!(
            "the file system of {} does not support O_DIRECT: \
             running buffered, through the page cache",
            path.display()
        ),
    )
}
