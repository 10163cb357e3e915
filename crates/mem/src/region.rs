//! Where a kernel's arrays live: anonymous memory ("heap") or one file
//! mapped `MAP_SHARED` on the device under test.
//!
//! Both are one mapping cut into arrays. The heap case is an anonymous
//! private mapping, which is what `malloc` returns for blocks this large, so
//! its pages are untouched until the kernel's parallel initialisation writes
//! them (first touch by the owning thread). The file case preallocates the
//! file (`fallocate`) so a full disk fails here, not as SIGBUS mid-run, and
//! removes it when the region is dropped, on success, error or panic.
//!
//! A file mapping can still fault if another process truncates the file
//! while it is mapped (SIGBUS, which kills the process silently). Each file
//! mapping is watched by [`iomark_host::sigbus`], and a region whose file
//! shrank is reported by [`Region::shrank`] as [`MemError::FileShrank`].
//!
//! Array `n` starts on a page boundary plus `n x` [`ARRAY_PAD`] bytes: 14
//! arrays at identical page offsets alias in the caches (the erikarn Himeno
//! README measured 673 against 1056 MFLOPS for that), so they are staggered.

use iomark_host::sigbus::Watch;
use iomark_host::test_files;
use rustix::fs::{Mode, OFlags};
use std::fs::{self, File};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use iomark_model::mem::{Advice, Backing};
use iomark_model::units::Nanos;
use memmap2::{MmapMut, MmapOptions};

use crate::MemError;

/// Bytes added to the start of array `n`, times `n`: four cache lines.
pub const ARRAY_PAD: usize = 256;

const PAGE: usize = 4096;

/// Offsets (bytes) of arrays of the given byte sizes, and the total length.
pub fn layout(sizes: &[usize]) -> (Vec<usize>, usize) {
    let mut offsets = Vec::with_capacity(sizes.len());
    let mut end = 0usize;
    for (n, &len) in sizes.iter().enumerate() {
        let start = end.div_ceil(PAGE) * PAGE + n * ARRAY_PAD;
        offsets.push(start);
        end = start + len;
    }
    (offsets, end.div_ceil(PAGE) * PAGE)
}

/// The file name to create for `--backing mmap:PATH`: a new file inside
/// `PATH` when it is a directory, named as iomark names its test files
/// (`iomark_host::test_files`), so that `iomark clean` and the next run
/// find it after a kill; else `PATH` itself when it does not exist.
pub fn resolve_mmap_path(user: &Path) -> Result<PathBuf, MemError> {
    let bad = |reason: &str| MemError::BadBackingPath {
        path: user.to_path_buf(),
        reason: reason.to_string(),
    };
    if user.as_os_str().is_empty() {
        return Err(bad(
            "empty path (name a directory on the device to test, e.g. mmap:/mnt/ssd)",
        ));
    }
    if user.is_dir() {
        let name = iomark_host::test_files::new_test_file_name();
        return Ok(user.join(std::ffi::OsStr::from_bytes(name.as_bytes())));
    }
    if user.exists() {
        return Err(bad("exists and is not a directory; refusing to overwrite it (name a directory or a new file)"));
    }
    match user.parent() {
        Some(p) if p.as_os_str().is_empty() || p.is_dir() => Ok(user.to_path_buf()),
        _ => Err(bad(
            "its directory does not exist (create it or name an existing directory)",
        )),
    }
}

/// Removes the backing file when dropped.
#[derive(Debug)]
struct FileGuard {
    path: PathBuf,
    file: File,
}

impl Drop for FileGuard {
    fn drop(&mut self) {
        // The mapping is gone by now (field order in `Region`); dropping the
        // cached pages first keeps a big run's page cache from lingering.
        let _ = rustix::fs::fadvise(&self.file, 0, None, rustix::fs::Advice::DontNeed);
        let _ = fs::remove_file(&self.path);
    }
}

/// One mapping holding every array of a kernel.
#[derive(Debug)]
pub struct Region {
    // Declared first: unregistered before the range is unmapped, after
    // which it may be reused.
    watch: Option<Watch>,
    // Declared before `file` so the mapping is unmapped before the file is
    // removed.
    map: MmapMut,
    file: Option<FileGuard>,
    offsets: Vec<usize>,
    sizes: Vec<usize>,
}

impl Region {
    /// Map arrays of the given byte sizes on `backing`.
    pub fn new(backing: &Backing, advice: Advice, sizes: &[usize]) -> Result<Region, MemError> {
        let (offsets, total) = layout(sizes);
        let mut watch = None;
        let (map, file) = match backing {
            // A swap backing is the heap; its area was set up by the parent.
            Backing::Heap | Backing::Swap { .. } => {
                let map = MmapOptions::new().len(total).map_anon().map_err(|source| {
                    MemError::Allocate {
                        bytes: total as u64,
                        source,
                    }
                })?;
                (map, None)
            }
            Backing::Mmap { path, warm } => {
                let (map, guard) = map_file(Path::new(path), total)?;
                if *warm {
                    read_through(&guard)?;
                }
                let how = match advice {
                    Advice::Normal => memmap2::Advice::Normal,
                    Advice::Sequential => memmap2::Advice::Sequential,
                    Advice::Random => memmap2::Advice::Random,
                };
                map.advise(how).map_err(|source| MemError::BackingFile {
                    path: guard.path.clone(),
                    what: "madvise",
                    source,
                })?;
                let w = Watch::new(map.as_ptr() as usize, map.len()).map_err(|source| {
                    MemError::BackingFile {
                        path: guard.path.clone(),
                        what: "watch for truncation",
                        source,
                    }
                })?;
                watch = Some(w);
                (map, Some(guard))
            }
        };
        Ok(Region {
            watch,
            map,
            file,
            offsets,
            sizes: sizes.to_vec(),
        })
    }

    /// The arrays, as slices of `T` (each size must be a multiple of
    /// `size_of::<T>()`).
    pub fn arrays<T: bytemuck::Pod>(&mut self) -> Vec<&mut [T]> {
        let mut rest: &mut [u8] = &mut self.map[..];
        let mut at = 0;
        let mut out = Vec::with_capacity(self.sizes.len());
        for (&off, &len) in self.offsets.iter().zip(&self.sizes) {
            let (_, tail) = std::mem::take(&mut rest).split_at_mut(off - at);
            let (bytes, tail) = tail.split_at_mut(len);
            // Offsets are page-aligned plus multiples of 256, so any Pod
            // element type up to 256 bytes is aligned.
            out.push(bytemuck::cast_slice_mut(bytes));
            rest = tail;
            at = off + len;
        }
        out
    }

    /// [`MemError::FileShrank`] when the backing file was truncated under
    /// the mapping.
    pub fn shrank(&self) -> Result<(), MemError> {
        match (&self.watch, &self.file) {
            (Some(w), Some(guard)) if w.shrank() => Err(MemError::FileShrank {
                path: guard.path.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// Write a file mapping back (`msync(MS_SYNC)`) and time it; `None` on the
    /// heap.
    pub fn sync(&mut self) -> Result<Option<Nanos>, MemError> {
        let Some(guard) = &self.file else {
            return Ok(None);
        };
        let t = Instant::now();
        self.map.flush().map_err(|source| MemError::BackingFile {
            path: guard.path.clone(),
            what: "msync",
            source,
        })?;
        Ok(Some(Nanos::from_duration(t.elapsed())))
    }
}

/// `--warm`: read the whole file once, so its pages are in the page cache
/// when the kernel first touches the mapping (minor faults, no reads from
/// the device). Done in the process that runs the kernel, inside its memory
/// cgroup, so the cached pages count against the limit as the kernel's own.
fn read_through(guard: &FileGuard) -> Result<(), MemError> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0u64;
    loop {
        let n = match guard.file.read_at(&mut buf, at) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(MemError::BackingFile {
                    path: guard.path.clone(),
                    what: "read through (--warm)",
                    source,
                })
            }
        };
        if n == 0 {
            return Ok(());
        }
        at += n as u64;
    }
}

fn map_file(path: &Path, len: usize) -> Result<(MmapMut, FileGuard), MemError> {
    let err = |what: &'static str| {
        let path = path.to_path_buf();
        move |source| MemError::BackingFile { path, what, source }
    };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().unwrap_or_default();
    let dir_fd = rustix::fs::open(
        &dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| err("open its directory")(e.into()))?;
    if test_files::is_test_file_name(name.as_bytes()) {
        // Files a killed run left go before the free space is judged.
        test_files::remove_stale_in(&dir_fd, &dir).map_err(err("clean up stale files"))?;
    }
    if let Ok(st) = rustix::fs::fstatvfs(&dir_fd) {
        let free = st.f_bavail.saturating_mul(st.f_frsize);
        if free < len as u64 {
            return Err(MemError::NoSpace {
                path: dir,
                need: len as u64,
                free,
            });
        }
    }
    // As a test file: new, no symbolic link, mode 0600, and locked for the
    // run (before any sweep can see it), so clean-up tells a live run's
    // file from a killed one's.
    let fd = test_files::create_locked(&dir_fd, name).map_err(|e| err(e.step)(e.source))?;
    // From here on the guard removes the file whatever happens.
    let guard = FileGuard {
        path: path.to_path_buf(),
        file: File::from(fd),
    };
    match rustix::fs::fallocate(
        &guard.file,
        rustix::fs::FallocateFlags::empty(),
        0,
        len as u64,
    ) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::OPNOTSUPP => {
            guard.file.set_len(len as u64).map_err(err("set length"))?
        }
        Err(e) => return Err(err("fallocate")(e.into())),
    }
    // SAFETY: the file was created by this process a moment ago with a unique
    // name and nothing else maps or truncates it while the mapping lives (the
    // guard only removes it after the mapping is dropped).
    let map = unsafe { MmapOptions::new().len(len).map_mut(&guard.file) }.map_err(err("mmap"))?;
    Ok((map, guard))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_are_page_aligned_and_staggered() {
        let (off, total) = layout(&[10_000, 8, 4096]);
        assert_eq!(off, vec![0, 12288 + 256, 16384 + 512]);
        assert_eq!(total, 24576);
    }

    #[test]
    fn a_file_region_is_removed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let path = resolve_mmap_path(dir.path()).unwrap();
        let backing = Backing::Mmap {
            path: path.display().to_string(),
            warm: true,
        };
        {
            let mut r = Region::new(&backing, Advice::Sequential, &[64, 128]).unwrap();
            let mut a = r.arrays::<f64>();
            a[1][15] = 2.5;
            assert_eq!(a[0].len(), 8);
            assert!(path.exists());
            assert!(r.sync().unwrap().is_some());
        }
        assert!(!path.exists());
    }

    #[test]
    fn an_existing_file_is_not_overwritten() {
        let f = tempfile::NamedTempFile::new().unwrap();
        assert!(resolve_mmap_path(f.path()).is_err());
    }
}
