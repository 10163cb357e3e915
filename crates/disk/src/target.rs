//! Targets: a test file iomark creates, an existing file, or a block device;
//! and the rules that keep a benchmark from destroying data.
//!
//! * A directory gets a test file `iomark-<random>.tmp`: free space is
//!   checked first, the file is preallocated and filled with the job's data
//!   (so reads never hit holes), and it is removed when [`OpenTarget`] is
//!   dropped, whether the run succeeded, failed or was interrupted. The file
//!   is `flock`ed for as long as it lives; a test file whose lock can be
//!   taken belongs to a run that was killed, and is removed by the next run
//!   in that directory or by `iomark clean`.
//! * An existing regular file or a block device is read freely; writing to
//!   it needs `--allow-write` naming it (compared after resolving symlinks).
//! * A block device opened for writing must not be mounted, used as swap or
//!   held by a stacked device; it is opened with `O_EXCL`, which the kernel
//!   refuses while anyone holds it, and that claim is kept for the whole
//!   run so nobody can mount it meanwhile.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use iomark_model::disk::{DataPattern, DiskTarget, TargetKind};
use iomark_model::units::Bytes;
use iomark_model::{Warning, WarningKind};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rustix::fs::{FlockOperation, SeekFrom};

use crate::buffer::AlignedBuf;
use crate::{pattern, DiskError};

/// Prefix and suffix of the test files iomark creates.
const TEST_FILE_PREFIX: &str = "iomark-";
const TEST_FILE_SUFFIX: &str = ".tmp";

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
    // Held only for its Drop, which removes the test file.
    _test_file: Option<TestFile>,
}

impl OpenTarget {
    /// Resolve, check and open a target; create and fill a test file when
    /// the path is a directory. `stop` aborts a long fill (Ctrl-C).
    pub fn open(req: &TargetRequest, stop: &AtomicBool) -> Result<Self, DiskError> {
        let meta = fs::metadata(&req.path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => DiskError::target(
                &req.path,
                "does not exist: name an existing directory, file or block device",
            ),
            _ => DiskError::target(&req.path, format!("cannot be inspected: {e}")),
        })?;
        let resolved = fs::canonicalize(&req.path)
            .map_err(|e| DiskError::target(&req.path, format!("cannot be resolved: {e}")))?;
        if meta.is_dir() {
            open_test_file(req, &resolved, stop)
        } else if meta.file_type().is_block_device() {
            open_existing(req, &resolved, TargetKind::BlockDevice)
        } else if meta.is_file() {
            open_existing(req, &resolved, TargetKind::File)
        } else {
            Err(DiskError::target(
                &req.path,
                "is neither a directory, a regular file nor a block device",
            ))
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
}

/// Removes the test file when dropped; holds its lock while alive.
#[derive(Debug)]
struct TestFile {
    path: PathBuf,
    _lock: File,
}

impl Drop for TestFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn is_test_file_name(name: &str) -> bool {
    name.starts_with(TEST_FILE_PREFIX) && name.ends_with(TEST_FILE_SUFFIX)
}

/// Remove test files in `dir` left by killed runs: those nobody holds a lock
/// on. Files of runs still going are left alone. Returns what was removed.
pub fn remove_stale_test_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if !name.to_str().is_some_and(is_test_file_name) || !entry.file_type()?.is_file() {
            continue;
        }
        let path = entry.path();
        let Ok(file) = OpenOptions::new().read(true).open(&path) else {
            continue;
        };
        if rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).is_ok() {
            fs::remove_file(&path)?;
            removed.push(path);
        }
    }
    Ok(removed)
}

/// Bytes free for this user; `u64::MAX` for file systems that report no
/// size at all (ramfs), where only the writes themselves can tell.
fn free_space(dir: &Path) -> Result<u64, DiskError> {
    let st = rustix::fs::statvfs(dir)
        .map_err(|e| DiskError::target(dir, format!("cannot read free space: {e}")))?;
    if st.f_blocks == 0 {
        return Ok(u64::MAX);
    }
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

fn open_test_file(
    req: &TargetRequest,
    dir: &Path,
    stop: &AtomicBool,
) -> Result<OpenTarget, DiskError> {
    if rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_err() {
        return Err(DiskError::target(
            dir,
            "is not writable: choose a directory you can write to",
        ));
    }
    let removed_stale = remove_stale_test_files(dir)
        .map_err(|e| DiskError::target(dir, format!("cannot list the directory: {e}")))?;
    let lbs = iomark_host::logical_block_size_for(dir).unwrap_or(512);
    // Whole pages, so O_DIRECT can write the last chunk too.
    let size = req.size.unwrap_or(req.default_size).get().div_ceil(4096) * 4096;
    let available = free_space(dir)?;
    if size > available {
        return Err(DiskError::NoSpace {
            path: dir.to_path_buf(),
            needed: Bytes(size),
            available: Bytes(available),
        });
    }
    let path = dir.join(format!(
        "{TEST_FILE_PREFIX}{:016x}{TEST_FILE_SUFFIX}",
        rand::random::<u64>()
    ));
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| DiskError::target(dir, format!("cannot create a test file: {e}")))?;
    rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive)
        .map_err(|e| DiskError::target(&path, format!("cannot lock the test file: {e}")))?;
    // From here on the guard removes the file on every way out.
    let guard = TestFile {
        path: path.clone(),
        _lock: lock,
    };
    match rustix::fs::fallocate(&guard._lock, rustix::fs::FallocateFlags::empty(), 0, size) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::NOSPC => {
            return Err(DiskError::NoSpace {
                path: dir.to_path_buf(),
                needed: Bytes(size),
                available: Bytes(free_space(dir).unwrap_or(0)),
            })
        }
        // File systems without fallocate get their blocks from the fill.
        Err(_) => {}
    }
    let (file, direct, mut warnings) = open_with_mode(&path, true, req.direct, false)?;
    fill(&file, size, direct, req, lbs, stop).map_err(|e| match e {
        DiskError::Io { errno, .. } if errno == libc::ENOSPC => DiskError::NoSpace {
            path: dir.to_path_buf(),
            needed: Bytes(size),
            available: Bytes(free_space(dir).unwrap_or(0)),
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
        _test_file: Some(guard),
    })
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
    kind: TargetKind,
) -> Result<OpenTarget, DiskError> {
    let allowed = req
        .allow_write
        .iter()
        .filter_map(|p| fs::canonicalize(p).ok())
        .any(|p| p == resolved);
    let noun = match kind {
        TargetKind::BlockDevice => "device",
        _ => "file",
    };
    if req.write && !allowed {
        return Err(DiskError::Refused(format!(
            "{} is an existing {noun} and the job writes: its data would be overwritten. \
             Add --allow-write {} if that is what you want, or name a directory to test \
             on a test file",
            req.path.display(),
            resolved.display()
        )));
    }
    let exclusive = kind == TargetKind::BlockDevice && req.write;
    if exclusive {
        refuse_if_in_use(resolved)?;
    }
    let (file, direct, warnings) = open_with_mode(resolved, req.write, req.direct, exclusive)?;
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
    let lbs = iomark_host::logical_block_size_for(resolved).unwrap_or(512);
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
        _test_file: None,
    })
}

fn refuse_if_in_use(dev: &Path) -> Result<(), DiskError> {
    let mounts = iomark_host::mount_points_of_device(dev);
    if !mounts.is_empty() {
        let list: Vec<String> = mounts.iter().map(|p| p.display().to_string()).collect();
        return Err(DiskError::Refused(format!(
            "{} is mounted or used as swap ({}): unmount it (and swapoff) before writing to it",
            dev.display(),
            list.join(", ")
        )));
    }
    let holders = iomark_host::holders_of_device(dev);
    if !holders.is_empty() {
        return Err(DiskError::Refused(format!(
            "{} is held by {}: stop the device stacked on it before writing to it",
            dev.display(),
            holders.join(", ")
        )));
    }
    Ok(())
}

/// Open read-only or read-write, with O_DIRECT as asked.
fn open_with_mode(
    path: &Path,
    write: bool,
    mode: DirectMode,
    exclusive: bool,
) -> Result<(File, bool, Vec<Warning>), DiskError> {
    let open = |direct: bool| {
        let mut flags = 0;
        if direct {
            flags |= libc::O_DIRECT;
        }
        if exclusive {
            flags |= libc::O_EXCL;
        }
        OpenOptions::new()
            .read(true)
            .write(write)
            .custom_flags(flags)
            .open(path)
    };
    let explain = |e: io::Error| match e.raw_os_error() {
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
    };
    let mut warnings = Vec::new();
    match mode {
        DirectMode::Buffered => Ok((open(false).map_err(explain)?, false, warnings)),
        DirectMode::Direct | DirectMode::Auto => match open(true) {
            Ok(f) => Ok((f, true, warnings)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                if mode == DirectMode::Direct {
                    return Err(DiskError::NoDirectIo(path.to_path_buf()));
                }
                warnings.push(Warning::new(
                    WarningKind::BufferedIo,
                    format!(
                        "the file system of {} does not support O_DIRECT: \
                         running buffered, through the page cache",
                        path.display()
                    ),
                ));
                Ok((open(false).map_err(explain)?, false, warnings))
            }
            Err(e) => Err(explain(e)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }

    fn test_files(dir: &Path) -> Vec<PathBuf> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| is_test_file_name(p.file_name().unwrap().to_str().unwrap()))
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
        fs::write(&stale, b"left by a killed run").unwrap();
        let other = dir.path().join("notes.tmp");
        fs::write(&other, b"not ours").unwrap();
        let stop = AtomicBool::new(false);
        let live = OpenTarget::open(&request(dir.path(), 1 << 20), &stop).unwrap();
        assert_eq!(live.removed_stale, vec![stale.clone()]);
        assert!(!stale.exists() && other.exists());
        // A second run must not remove the first run's (locked) file.
        assert!(remove_stale_test_files(dir.path()).unwrap().is_empty());
        assert_eq!(test_files(dir.path()).len(), 1);
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
