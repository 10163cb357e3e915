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

use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use iomark_host::WriteObject;
use iomark_model::disk::{DataPattern, DiskTarget, TargetKind};
use iomark_model::units::Bytes;
use iomark_model::{Warning, WarningKind};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags, ResolveFlags, SeekFrom, CWD};
use rustix::io::Errno;

use crate::buffer::AlignedBuf;
use crate::{pattern, DiskError};

/// Prefix and suffix of the test files iomark creates; between them, 16
/// lowercase hex digits.
const TEST_FILE_PREFIX: &str = "iomark-";
const TEST_FILE_SUFFIX: &str = ".tmp";
/// The mode iomark gives its test files; stale-file clean-up removes only
/// files with exactly this mode.
const TEST_FILE_MODE: u32 = 0o600;

/// Size of the writes that fill a new test file.
const FILL_CHUNK: usize = 1 << 20;

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
    pub fn from_choice(direct: Option<bool>) -> Self {
        match direct {
            Some(true) => DirectMode::Direct,
            Some(false) => DirectMode::Buffered,
            None => DirectMode::Auto,
        }
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
}

/// The identity of an open object: what `fstat` says of its descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    rdev: u64,
    kind: FileType,
}

impl Identity {
    fn of(fd: impl AsFd) -> io::Result<Self> {
        let st = rustix::fs::fstat(fd)?;
        Ok(Identity {
            dev: st.st_dev,
            ino: st.st_ino,
            rdev: st.st_rdev,
            kind: FileType::from_raw_mode(st.st_mode),
        })
    }

    /// Whether `--allow-write` naming `self` allows writing `target`: the
    /// same device number for devices (any node of the device), the same
    /// device and inode for files.
    fn allows(&self, target: &Identity) -> bool {
        if target.kind == FileType::BlockDevice {
            self.kind == FileType::BlockDevice && self.rdev == target.rdev
        } else {
            self.same_object(target)
        }
    }

    /// The same object: device and inode, and for devices the device number.
    fn same_object(&self, other: &Identity) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && self.kind == other.kind
            && (self.kind != FileType::BlockDevice || self.rdev == other.rdev)
    }

    fn write_object(&self) -> WriteObject {
        if self.kind == FileType::BlockDevice {
            WriteObject::Block(iomark_model::device::DevNo {
                major: rustix::fs::major(self.rdev),
                minor: rustix::fs::minor(self.rdev),
            })
        } else {
            WriteObject::File {
                dev: self.dev,
                ino: self.ino,
            }
        }
    }
}

/// An open target, ready for jobs. Dropping it removes a test file.
#[derive(Debug)]
pub struct OpenTarget {
    /// The descriptor every engine uses.
    pub file: Arc<File>,
    /// What the target is, for results.
    pub info: DiskTarget,
    /// Whether O_DIRECT is in effect.
    pub direct: bool,
    /// Whether it was opened for writing.
    pub writable: bool,
    /// Things worth knowing about how it was opened.
    pub warnings: Vec<Warning>,
    /// Stale test files of killed runs removed on the way.
    pub removed_stale: Vec<PathBuf>,
    identity: Identity,
    // Held only for its Drop, which removes the test file.
    _test_file: Option<TestFile>,
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

    /// Drop the target's pages from the page cache, so buffered jobs start
    /// cold (fio's default `invalidate=1`). Block devices are flushed first.
    pub fn invalidate_cache(&self) {
        // Advice only: a file system that ignores it costs accuracy, not
        // correctness, and buffered runs carry a warning anyway.
        let _ = rustix::fs::fdatasync(&*self.file);
        let _ = rustix::fs::fadvise(&*self.file, 0, None, rustix::fs::Advice::DontNeed);
    }

    /// A second descriptor for the same object with other flags (O_SYNC,
    /// O_DIRECT), opened through `/proc/self/fd` and checked to be the same
    /// object: never by name. Writable only if the target is.
    pub fn reopen(&self, write: bool, extra: OFlags) -> Result<File, DiskError> {
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

/// Open `path` with no symbolic link anywhere in it (it was resolved just
/// before, so a link there now means someone is changing it).
fn open_no_symlinks(path: &Path, flags: OFlags) -> Result<OwnedFd, DiskError> {
    let flags = flags | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat2(CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS) {
        // Kernels before 5.6: the last component at least is not followed.
        Err(Errno::NOSYS) => rustix::fs::openat(CWD, path, flags | OFlags::NOFOLLOW, Mode::empty()),
        other => other,
    };
    fd.map_err(|e| match e {
        Errno::LOOP => changed_while_opening(path),
        Errno::NOENT => DiskError::target(
            path,
            "disappeared while it was being opened: check who is removing it, then run again",
        ),
        e => explain_open(path, false, e.into()),
    })
}

fn changed_while_opening(path: &Path) -> DiskError {
    DiskError::Refused(format!(
        "{} changed while it was being opened (a symbolic link appeared in its path): \
         check who is changing it, then run again",
        path.display()
    ))
}

/// Open the object `fd` refers to again with `flags`, through its
/// `/proc/self/fd` entry (which leads to the object, not to a name), and
/// check that the new descriptor reached that same object.
fn reopen(fd: impl AsFd, expected: &Identity, flags: OFlags) -> io::Result<OwnedFd> {
    let proc_path = format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd());
    let new = rustix::fs::openat(
        CWD,
        proc_path.as_str(),
        flags | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| {
        if e == Errno::NOENT {
            io::Error::other("/proc is not mounted: iomark opens targets through /proc/self/fd")
        } else {
            e.into()
        }
    })?;
    if !Identity::of(&new)?.same_object(expected) {
        return Err(io::Error::other(
            "it was replaced while it was being opened: check who is changing it, then run again",
        ));
    }
    Ok(new)
}

/// Removes the test file when dropped, if its name still leads to the file
/// iomark created; holds its lock while alive.
#[derive(Debug)]
struct TestFile {
    dir: OwnedFd,
    name: CString,
    file: File,
    identity: Identity,
}

impl Drop for TestFile {
    fn drop(&mut self) {
        let ours = rustix::fs::statat(&self.dir, self.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| st.st_dev == self.identity.dev && st.st_ino == self.identity.ino);
        if ours {
            let _ = rustix::fs::unlinkat(&self.dir, self.name.as_c_str(), AtFlags::empty());
        } else {
            // Someone moved it or put something else under its name: remove
            // nothing that is not ours, but leave no test data behind.
            let _ = rustix::fs::ftruncate(&self.file, 0);
        }
    }
}

/// `iomark-` followed by exactly 16 lowercase hex digits and `.tmp`: the
/// names iomark gives its test files, and the only ones clean-up touches.
fn is_test_file_name(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(TEST_FILE_PREFIX.as_bytes()) else {
        return false;
    };
    let Some(hex) = rest.strip_suffix(TEST_FILE_SUFFIX.as_bytes()) else {
        return false;
    };
    hex.len() == 16 && hex.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

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

fn remove_stale_in(dir: &OwnedFd, shown_as: &Path) -> io::Result<Vec<PathBuf>> {
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
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
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
    rustix::fs::unlinkat(dir, name, AtFlags::empty())?;
    Ok(true)
}

/// Bytes free for this user; `u64::MAX` for file systems that report no
/// size at all (ramfs), where only the writes themselves can tell.
fn free_space(dir: &OwnedFd, shown_as: &Path) -> Result<u64, DiskError> {
    let st = rustix::fs::fstatvfs(dir)
        .map_err(|e| DiskError::target(shown_as, format!("cannot read free space: {e}")))?;
    if st.f_blocks == 0 {
        return Ok(u64::MAX);
    }
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
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

fn open_test_file(
    req: &TargetRequest,
    dir_path: &Path,
    dir: OwnedFd,
    stop: &AtomicBool,
) -> Result<OpenTarget, DiskError> {
    if rustix::fs::access(dir_path, rustix::fs::Access::WRITE_OK).is_err() {
        return Err(DiskError::target(
            dir_path,
            "is not writable: choose a directory you can write to",
        ));
    }
    let known_lbs = iomark_host::logical_block_size_of(&dir);
    // Checked before anything is created; a file system of unknown block
    // size is checked once O_DIRECT is known to work on it, still before
    // the fill.
    if req.direct != DirectMode::Buffered {
        if let Some(lbs) = known_lbs {
            check_io_sizes(req, u64::from(lbs), dir_path)?;
        }
    }
    let lbs = known_lbs.unwrap_or(512);
    // Whole pages, so O_DIRECT can write the last chunk too.
    let size = req.size.unwrap_or(req.default_size).get().div_ceil(4096) * 4096;
    let removed_stale = remove_stale_in(&dir, dir_path)
        .map_err(|e| DiskError::target(dir_path, format!("cannot list the directory: {e}")))?;
    let available = free_space(&dir, dir_path)?;
    if size > available {
        return Err(DiskError::NoSpace {
            path: dir_path.to_path_buf(),
            needed: Bytes(size),
            available: Bytes(available),
        });
    }
    let name = CString::new(format!(
        "{TEST_FILE_PREFIX}{:016x}{TEST_FILE_SUFFIX}",
        rand::random::<u64>()
    ))
    .expect("a name of ASCII letters and digits has no NUL");
    let path = dir_path.join(OsStr::from_bytes(name.as_bytes()));
    let fd = rustix::fs::openat(
        &dir,
        name.as_c_str(),
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(TEST_FILE_MODE),
    )
    .map_err(|e| DiskError::target(dir_path, format!("cannot create a test file: {e}")))?;
    let file = File::from(fd);
    let identity = Identity::of(&file)
        .map_err(|e| DiskError::target(&path, format!("cannot be inspected: {e}")))?;
    // From here on the guard removes the file on every way out.
    let guard = TestFile {
        dir,
        name,
        file: file
            .try_clone()
            .map_err(|e| DiskError::target(&path, format!("cannot be duplicated: {e}")))?,
        identity,
    };
    // The umask may have taken bits away; clean-up recognises exactly this.
    rustix::fs::fchmod(&file, Mode::from_raw_mode(TEST_FILE_MODE))
        .map_err(|e| DiskError::target(&path, format!("cannot set its mode: {e}")))?;
    rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive)
        .map_err(|e| DiskError::target(&path, format!("cannot lock the test file: {e}")))?;
    let (direct, mut warnings) = set_direct(&file, req.direct, &path)?;
    if direct && known_lbs.is_none() {
        check_io_sizes(req, u64::from(lbs), dir_path)?;
    }
    match rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, size) {
        Ok(()) => {}
        Err(e) if e == Errno::NOSPC => {
            return Err(DiskError::NoSpace {
                path: dir_path.to_path_buf(),
                needed: Bytes(size),
                available: Bytes(free_space(&guard.dir, dir_path).unwrap_or(0)),
            })
        }
        // File systems without fallocate get their blocks from the fill.
        Err(_) => {}
    }
    fill(&file, size, direct, req, lbs, stop).map_err(|e| match e {
        DiskError::Io { errno, .. } if errno == libc::ENOSPC => DiskError::NoSpace {
            path: dir_path.to_path_buf(),
            needed: Bytes(size),
            available: Bytes(free_space(&guard.dir, dir_path).unwrap_or(0)),
        },
        other => other,
    })?;
    if matches!(req.data, DataPattern::Zeros | DataPattern::Compressible(_)) {
        warnings.push(Warning::new(
            WarningKind::CompressibleData,
            format!(
                "data pattern {}: devices and file systems that compress or skip zeros \
                 look faster than they are (use --data random for the real rate)",
                req.data
            ),
        ));
    }
    Ok(OpenTarget {
        file: Arc::new(file),
        info: DiskTarget {
            given: req.path.display().to_string(),
            path: path.display().to_string(),
            kind: TargetKind::TestFile,
            size: Bytes(size),
            logical_block_size: lbs,
        },
        direct,
        writable: true,
        warnings,
        removed_stale,
        identity,
        _test_file: Some(guard),
    })
}

/// Switch O_DIRECT on for the descriptor already open, as `mode` asks:
/// whether it is on, and a warning when it could not be.
fn set_direct(
    file: &File,
    mode: DirectMode,
    path: &Path,
) -> Result<(bool, Vec<Warning>), DiskError> {
    if mode == DirectMode::Buffered {
        return Ok((false, Vec::new()));
    }
    let flags = rustix::fs::fcntl_getfl(file)
        .map_err(|e| DiskError::target(path, format!("cannot read its flags: {e}")))?;
    match rustix::fs::fcntl_setfl(file, flags | OFlags::DIRECT) {
        Ok(()) => Ok((true, Vec::new())),
        Err(Errno::INVAL) if mode == DirectMode::Auto => Ok((false, vec![no_direct_warning(path)])),
        Err(Errno::INVAL) => Err(DiskError::NoDirectIo(path.to_path_buf())),
        Err(e) => Err(DiskError::target(
            path,
            format!("cannot switch direct I/O on: {e}"),
        )),
    }
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

/// Write `size` bytes of the pattern, in 1 MiB chunks, then make it durable.
fn fill(
    file: &File,
    size: u64,
    direct: bool,
    req: &TargetRequest,
    lbs: u32,
    stop: &AtomicBool,
) -> Result<(), DiskError> {
    let mut buf = AlignedBuf::new(FILL_CHUNK, lbs as usize);
    let mut rng = SmallRng::seed_from_u64(req.seed ^ 0xF111);
    let mut offset = 0u64;
    pattern::fill(buf.as_mut_slice(), req.data, &mut rng);
    while offset < size {
        if stop.load(Ordering::Relaxed) {
            return Err(DiskError::Interrupted);
        }
        let n = (size - offset).min(FILL_CHUNK as u64) as usize;
        if req.data != DataPattern::Zeros {
            // Fresh random bytes per chunk: no two chunks dedupe.
            pattern::fill(&mut buf.as_mut_slice()[..n], req.data, &mut rng);
        }
        let written =
            rustix::io::pwrite(file, &buf.as_slice()[..n], offset).map_err(|e| DiskError::Io {
                errno: e.raw_os_error(),
                message: format!(
                    "filling the test file failed at offset {offset}{}: {e}",
                    if direct { " (direct I/O)" } else { "" }
                ),
            })?;
        offset += written as u64;
    }
    rustix::fs::fdatasync(file).map_err(|e| DiskError::Io {
        errno: e.raw_os_error(),
        message: format!("flushing the test file failed: {e}"),
    })?;
    Ok(())
}

fn open_existing(
    req: &TargetRequest,
    resolved: &Path,
    handle: &OwnedFd,
    identity: Identity,
    allowed: &[Identity],
    kind: TargetKind,
) -> Result<OpenTarget, DiskError> {
    let noun = match kind {
        TargetKind::BlockDevice => "device",
        _ => "file",
    };
    if req.write && !allowed.iter().any(|a| a.allows(&identity)) {
        return Err(DiskError::Refused(format!(
            "{} is an existing {noun} and the job writes: its data would be overwritten. \
             Add --allow-write {} if that is what you want, or name a directory to test \
             on a test file",
            req.path.display(),
            resolved.display()
        )));
    }
    let exclusive = kind == TargetKind::BlockDevice && req.write;
    let (file, direct, warnings) = open_with_mode(
        handle, &identity, resolved, req.write, req.direct, exclusive,
    )?;
    if req.write {
        // After the exclusive open: nobody can mount the device meanwhile.
        refuse_if_in_use(resolved, &identity)?;
    }
    let lbs = iomark_host::logical_block_size_of(&file).unwrap_or(512);
    if direct {
        check_io_sizes(req, u64::from(lbs), resolved)?;
    }
    let full = rustix::fs::seek(&file, SeekFrom::End(0))
        .map_err(|e| DiskError::target(resolved, format!("cannot read its size: {e}")))?;
    let size = match req.size {
        Some(s) if s.get() > full => {
            return Err(DiskError::Invalid(format!(
                "--size {s} is larger than {} ({}): lower --size",
                resolved.display(),
                Bytes(full)
            )))
        }
        Some(s) => s.get(),
        None => full,
    };
    Ok(OpenTarget {
        file: Arc::new(file),
        info: DiskTarget {
            given: req.path.display().to_string(),
            path: resolved.display().to_string(),
            kind,
            size: Bytes(size),
            logical_block_size: lbs,
        },
        direct,
        writable: req.write,
        warnings,
        removed_stale: Vec::new(),
        identity,
        _test_file: None,
    })
}

/// The objects `--allow-write` names, symlinks followed as the user meant
/// them; names that lead nowhere allow nothing.
fn allowed_objects(paths: &[PathBuf]) -> Vec<Identity> {
    paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| Identity {
            dev: m.dev(),
            ino: m.ino(),
            rdev: m.rdev(),
            kind: FileType::from_raw_mode(m.mode()),
        })
        .collect()
}

fn refuse_if_in_use(path: &Path, identity: &Identity) -> Result<(), DiskError> {
    let users = iomark_host::users_of(identity.write_object());
    if users.is_empty() {
        return Ok(());
    }
    let what = if identity.kind == FileType::BlockDevice {
        "unmount it (and swapoff, and stop what is stacked on it) before writing to it"
    } else {
        "unmount the file system on it (and detach the loop device, or swapoff) before writing to it"
    };
    Err(DiskError::Refused(format!(
        "{} is in use: {}. The same bytes would be written under it: {what}",
        path.display(),
        users.join("; ")
    )))
}

fn explain_open(path: &Path, write: bool, e: io::Error) -> DiskError {
    match e.raw_os_error() {
        Some(libc::EBUSY) => DiskError::Refused(format!(
            "{} is in use (mounted, swap, or held by another device or program): \
             stop using it before writing to it",
            path.display()
        )),
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => DiskError::target(
            path,
            format!(
                "cannot be opened for {}: {e} (run as a user with access{})",
                if write { "writing" } else { "reading" },
                if write {
                    ", or test a read-only job"
                } else {
                    ""
                }
            ),
        ),
        _ => DiskError::target(path, format!("cannot be opened: {e}")),
    }
}

/// Open the object behind `handle` read-only or read-write, with O_DIRECT
/// as asked, through `/proc/self/fd`.
fn open_with_mode(
    handle: &OwnedFd,
    identity: &Identity,
    path: &Path,
    write: bool,
    mode: DirectMode,
    exclusive: bool,
) -> Result<(File, bool, Vec<Warning>), DiskError> {
    let open = |direct: bool| {
        let mut flags = if write { OFlags::RDWR } else { OFlags::RDONLY };
        if direct {
            flags |= OFlags::DIRECT;
        }
        if exclusive {
            flags |= OFlags::EXCL;
        }
        reopen(handle, identity, flags).map(File::from)
    };
    let explain = |e: io::Error| explain_open(path, write, e);
    match mode {
        DirectMode::Buffered => Ok((open(false).map_err(explain)?, false, Vec::new())),
        DirectMode::Direct | DirectMode::Auto => match open(true) {
            Ok(f) => Ok((f, true, Vec::new())),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                if mode == DirectMode::Direct {
                    return Err(DiskError::NoDirectIo(path.to_path_buf()));
                }
                let f = open(false).map_err(explain)?;
                Ok((f, false, vec![no_direct_warning(path)]))
            }
            Err(e) => Err(explain(e)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    fn request(dir: &Path, size: u64) -> TargetRequest {
        TargetRequest {
            path: dir.to_path_buf(),
            size: Some(Bytes(size)),
            default_size: Bytes(1 << 20),
            write: true,
            allow_write: Vec::new(),
            direct: DirectMode::Buffered,
            data: DataPattern::Random,
            seed: 1,
            io_sizes: vec![Bytes(4096)],
        }
    }

    fn test_files(dir: &Path) -> Vec<PathBuf> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| is_test_file_name(p.file_name().unwrap().as_bytes()))
            .collect()
    }

    #[test]
    fn test_file_is_filled_and_removed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let t = OpenTarget::open(&request(dir.path(), 3 << 20), &stop).unwrap();
        let files = test_files(dir.path());
        assert_eq!(files.len(), 1);
        let data = fs::read(&files[0]).unwrap();
        assert_eq!(data.len(), 3 << 20);
        // Filled with random data: no run of zero pages (holes) anywhere.
        assert!(data.chunks(4096).all(|c| c.iter().any(|&b| b != 0)));
        drop(t);
        assert!(test_files(dir.path()).is_empty());
    }

    #[test]
    fn interrupted_fill_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(true);
        let err = OpenTarget::open(&request(dir.path(), 3 << 20), &stop).unwrap_err();
        assert!(matches!(err, DiskError::Interrupted));
        assert!(test_files(dir.path()).is_empty());
    }

    #[test]
    fn stale_files_are_removed_but_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join("iomark-00000000deadbeef.tmp");
        write_0600(&stale);
        // Near misses iomark never makes: another name, mode or kind.
        let other = dir.path().join("notes.tmp");
        write_0600(&other);
        let notes = dir.path().join("iomark-notes.tmp");
        write_0600(&notes);
        let upper = dir.path().join("iomark-00000000DEADBEEF.tmp");
        write_0600(&upper);
        let readable = dir.path().join("iomark-00000000cafebabe.tmp");
        fs::write(&readable, b"mode 0644").unwrap();
        fs::set_permissions(&readable, fs::Permissions::from_mode(0o644)).unwrap();
        let subdir = dir.path().join("iomark-0000000000000001.tmp");
        fs::create_dir(&subdir).unwrap();
        let link = dir.path().join("iomark-0000000000000002.tmp");
        std::os::unix::fs::symlink(&other, &link).unwrap();
        let stop = AtomicBool::new(false);
        let live = OpenTarget::open(&request(dir.path(), 1 << 20), &stop).unwrap();
        assert_eq!(live.removed_stale, vec![stale.clone()]);
        assert!(!stale.exists() && other.exists());
        for kept in [&notes, &upper, &readable, &subdir, &link] {
            assert!(
                kept.symlink_metadata().is_ok(),
                "{} was removed",
                kept.display()
            );
        }
        // A second run must not remove the first run's (locked) file.
        assert!(remove_stale_test_files(dir.path()).unwrap().is_empty());
        // The live one and the three near misses with an exact name.
        assert_eq!(test_files(dir.path()).len(), 4);
    }

    fn write_0600(path: &Path) {
        fs::write(path, b"left by a killed run").unwrap();
        fs::set_permissions(path, fs::Permissions::from_mode(0o600)).unwrap();
    }

    #[test]
    fn test_file_names_are_exact() {
        assert!(is_test_file_name(b"iomark-0123456789abcdef.tmp"));
        for bad in [
            &b"iomark-notes.tmp"[..],
            b"iomark-0123456789ABCDEF.tmp",
            b"iomark-0123456789abcde.tmp",
            b"iomark-0123456789abcdef0.tmp",
            b"iomark-0123456789abcdef.tmp~",
            b"xiomark-0123456789abcdef.tmp",
        ] {
            assert!(!is_test_file_name(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn misaligned_direct_sizes_are_refused_before_anything_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let mut req = request(dir.path(), 1 << 20);
        req.direct = DirectMode::Auto;
        req.io_sizes = vec![Bytes(3)];
        match OpenTarget::open(&req, &stop) {
            // A file system without O_DIRECT runs buffered, where 3 bytes is fine.
            Ok(t) => assert!(!t.direct),
            Err(e) => {
                assert!(e.to_string().contains("logical block size"), "{e}");
                assert!(test_files(dir.path()).is_empty());
            }
        }
    }

    #[test]
    fn test_file_is_not_removed_when_its_name_leads_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let t = OpenTarget::open(&request(dir.path(), 1 << 20), &stop).unwrap();
        let path = PathBuf::from(&t.info.path);
        let moved = dir.path().join("moved-away");
        fs::rename(&path, &moved).unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"keep me").unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        drop(t);
        assert_eq!(fs::read(&victim).unwrap(), b"keep me");
        assert!(
            path.symlink_metadata().is_ok(),
            "the symlink is not ours to remove"
        );
        // Ours, wherever it went, holds no test data any more.
        assert_eq!(fs::metadata(&moved).unwrap().len(), 0);
    }

    #[test]
    fn allow_write_matches_the_object_not_the_name() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("data.bin");
        fs::write(&f, vec![1u8; 8192]).unwrap();
        let alias = dir.path().join("alias");
        std::os::unix::fs::symlink(&f, &alias).unwrap();
        let other = dir.path().join("other.bin");
        fs::write(&other, vec![2u8; 8192]).unwrap();
        let stop = AtomicBool::new(false);
        let mut req = request(&f, 8192);
        // Allowed through a symlink to the same file: the same object.
        req.allow_write = vec![alias];
        assert!(OpenTarget::open(&req, &stop).is_ok());
        // A different file with the same contents is not.
        req.allow_write = vec![other];
        assert!(matches!(
            OpenTarget::open(&req, &stop),
            Err(DiskError::Refused(_))
        ));
    }

    #[test]
    fn too_large_a_test_file_is_refused_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let err = OpenTarget::open(&request(dir.path(), u64::MAX / 2), &stop).unwrap_err();
        assert!(matches!(err, DiskError::NoSpace { .. }), "{err}");
        assert!(test_files(dir.path()).is_empty());
    }

    #[test]
    fn writing_an_existing_file_needs_allow_write() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("data.bin");
        fs::write(&f, vec![1u8; 8192]).unwrap();
        let stop = AtomicBool::new(false);
        let mut req = request(&f, 8192);
        let err = OpenTarget::open(&req, &stop).unwrap_err();
        assert!(matches!(err, DiskError::Refused(_)), "{err}");
        assert!(err.to_string().contains("--allow-write"));
        req.allow_write = vec![f.clone()];
        let t = OpenTarget::open(&req, &stop).unwrap();
        assert_eq!(t.info.kind, TargetKind::File);
        req.write = false;
        req.allow_write.clear();
        assert!(OpenTarget::open(&req, &stop).is_ok());
    }
}
