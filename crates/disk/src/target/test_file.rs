//! iomark's own test file in a directory: created `O_EXCL|O_NOFOLLOW`
//! relative to the directory's descriptor, checked for space and I/O sizes
//! first, locked, preallocated and filled with the job's data, and removed
//! on drop only while its name still leads to the inode iomark created.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use iomark_model::disk::{DataPattern, DiskTarget, TargetKind};
use iomark_model::units::Bytes;
use iomark_model::{Warning, WarningKind};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use rustix::fs::{AtFlags, OFlags};
use rustix::io::Errno;

use super::identity::Identity;
use super::naming::{new_test_file_name, TEST_FILE_PREFIX};
use super::stale::remove_stale_in;
use super::{
    check_io_sizes, no_direct_warning, DirectMode, OpenTarget, TargetRequest, TestFilePrep,
};
use crate::buffer::AlignedBuf;
use crate::{pattern, DiskError};

/// Size of the writes that fill a new test file.
const FILL_CHUNK: usize = 1 << 20;

/// Removes the test file when dropped, if its name still leads to the file
/// iomark created; holds its lock while alive.
#[derive(Debug)]
pub(super) struct TestFile {
    dir: OwnedFd,
    name: CString,
    file: File,
    identity: Identity,
    /// Set once the file is kept for a later verify read phase: the user
    /// asked for it, so Drop leaves it.
    kept: bool,
}

impl TestFile {
    /// Keep the file under a name that says what it is and that the
    /// stale-file cleaner does not take for a killed run's
    /// (`iomark-verify-<16 hex>.dat`); its path.
    pub(super) fn keep(&mut self, shown_dir: &Path) -> Result<std::path::PathBuf, DiskError> {
        let hex = &self.name.as_bytes()[TEST_FILE_PREFIX.len()..][..16];
        let kept = CString::new([KEPT_PREFIX.as_bytes(), hex, KEPT_SUFFIX.as_bytes()].concat())
            .expect("a name of ASCII letters and digits has no NUL");
        let path = shown_dir.join(OsStr::from_bytes(kept.as_bytes()));
        rustix::fs::renameat_with(
            &self.dir,
            self.name.as_c_str(),
            &self.dir,
            kept.as_c_str(),
            rustix::fs::RenameFlags::NOREPLACE,
        )
        .map_err(|e| DiskError::target(&path, format!("cannot keep the verify file: {e}")))?;
        self.kept = true;
        Ok(path)
    }
}

/// Prefix and suffix of a test file kept by a verify write phase for a
/// later read phase; between them, the test file's 16 hex digits.
const KEPT_PREFIX: &str = "iomark-verify-";
/// See [`KEPT_PREFIX`].
const KEPT_SUFFIX: &str = ".dat";

/// Whether `name` is that of a kept verify file.
pub(crate) fn is_kept_name(name: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(KEPT_PREFIX.as_bytes()) else {
        return false;
    };
    let Some(hex) = rest.strip_suffix(KEPT_SUFFIX.as_bytes()) else {
        return false;
    };
    hex.len() == 16 && hex.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

impl Drop for TestFile {
    fn drop(&mut self) {
        if self.kept {
            return;
        }
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

/// Whether the file system writes a preallocated extent in place and never
/// compresses it: btrfs does (even on later overwrites, as seen with
/// `compress=zstd`), so a test file given its blocks by `fallocate` would
/// hide the file system's compression from every job, and from the
/// artefacts probe. There the fill alone gives the file its blocks, as an
/// ordinary file gets them.
fn hides_compression_when_preallocated(file: &File) -> bool {
    const BTRFS_SUPER_MAGIC: u64 = 0x9123_683e;
    rustix::fs::fstatfs(file).is_ok_and(|st| st.f_type as u64 == BTRFS_SUPER_MAGIC)
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

pub(super) fn open_test_file(
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
    // A test file smaller than the largest I/O of the plan can hold no
    // block of it: refused now, not after the file was made and filled.
    if let (Some(size), Some(&bs)) = (req.size, req.io_sizes.iter().max()) {
        if size < bs {
            return Err(DiskError::Invalid(format!(
                "--size {size} is smaller than one block of this test ({bs}): raise --size \
                 to at least {bs}"
            )));
        }
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
    let removed_stale = remove_stale_in(&dir, dir_path)
        .map_err(|e| DiskError::target(dir_path, format!("cannot list the directory: {e}")))?;
    let available = free_space(&dir, dir_path)?;
    let size = match (req.size, req.prep) {
        (Some(size), _) => size,
        (None, TestFilePrep::Filled) => req.default_size,
        // A file system that reports no size (ramfs) gets the default.
        (None, TestFilePrep::Unwritten(_)) if available == u64::MAX => req.default_size,
        (None, TestFilePrep::Unwritten(margin)) => {
            let size = margin.file_size(Bytes(available));
            if size.get() == 0 {
                return Err(DiskError::NoSpace {
                    path: dir_path.to_path_buf(),
                    needed: margin.leaves(Bytes(available)),
                    available: Bytes(available),
                });
            }
            size
        }
    };
    // Whole pages, so O_DIRECT can write the last chunk too; an unwritten
    // file sized to the free space is whole granules already.
    let size = match (req.size, req.prep) {
        (None, TestFilePrep::Unwritten(_)) => size.get(),
        _ => size.get().div_ceil(4096) * 4096,
    };
    if size > available {
        return Err(DiskError::NoSpace {
            path: dir_path.to_path_buf(),
            needed: Bytes(size),
            available: Bytes(available),
        });
    }
    let name = new_test_file_name();
    let path = dir_path.join(OsStr::from_bytes(name.as_bytes()));
    let fd = iomark_host::test_files::create_locked(&dir, &name)
        .map_err(|e| DiskError::target(dir_path, e.to_string()))?;
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
        kept: false,
    };
    let (direct, mut warnings) = set_direct(&file, req.direct, &path)?;
    if direct && known_lbs.is_none() {
        check_io_sizes(req, u64::from(lbs), dir_path)?;
    }
    let preallocate = !hides_compression_when_preallocated(&file);
    match preallocate
        .then(|| rustix::fs::fallocate(&file, rustix::fs::FallocateFlags::empty(), 0, size))
    {
        Some(Ok(())) | None => {}
        Some(Err(e)) if e == Errno::NOSPC => {
            return Err(DiskError::NoSpace {
                path: dir_path.to_path_buf(),
                needed: Bytes(size),
                available: Bytes(free_space(&guard.dir, dir_path).unwrap_or(0)),
            })
        }
        // File systems without fallocate get their blocks from the fill.
        Some(Err(_)) => {}
    }
    if req.prep == TestFilePrep::Filled {
        fill(&file, size, direct, req, lbs, stop).map_err(|e| match e {
            DiskError::Io { errno, .. } if errno == libc::ENOSPC => DiskError::NoSpace {
                path: dir_path.to_path_buf(),
                needed: Bytes(size),
                available: Bytes(free_space(&guard.dir, dir_path).unwrap_or(0)),
            },
            other => other,
        })?;
    }
    if req.data != DataPattern::Random {
        warnings.push(Warning::new(
            WarningKind::CompressibleData,
            format!(
                "data pattern {}: devices and file systems that compress, deduplicate \
                 or skip zeros look faster than they are (use --data random for the real rate)",
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
            size_from_device: false,
        },
        direct,
        writable: true,
        warnings,
        removed_stale,
        region_base: Bytes(0),
        identity,
        _test_file: Some(guard),
        _route: iomark_host::Route::default(),
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
