//! `--backing swap:PATH`: a swap area iomark sets up for one run and removes
//! after it.
//!
//! The area is a new file (in the directory `PATH`, or as the new file
//! `PATH`) or a whole block device the user named with `--allow-write`.
//! Everything is decided on the opened descriptor, never on the name: the
//! file is created with `O_CREAT|O_EXCL` and checked with `fstatfs`, the
//! device is opened with `O_EXCL` (refused while it is mounted or held in
//! any mount namespace), `fstat`ed, and its users (mounts, active swap,
//! stacked devices, loop devices over it) looked up by device number, the
//! other block devices on the way claimed for the run. The swap header is
//! written through that descriptor and `swapon(2)` and `swapoff(2)` are
//! given `/proc/self/fd/N`, which the kernel resolves to the very object
//! that was checked.
//!
//! [`SwapArea`] turns swap off and removes the file when dropped: on
//! success, on error, on a panic and after Ctrl-C, whose handler only raises
//! the stop flag, so the run returns normally through the drop. Only a
//! SIGKILL of iomark itself leaves the area active (`swapoff PATH` removes it).

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use iomark_host::{route_to, Route, WriteObject};
use iomark_model::device::DevNo;
use iomark_model::units::Bytes;

use crate::MemError;

/// `TMPFS_MAGIC`: its pages are memory, and the kernel refuses swap there.
const TMPFS_MAGIC: i64 = 0x0102_1994;
/// `BTRFS_SUPER_MAGIC`: swap files need nocow there.
const BTRFS_MAGIC: i64 = 0x9123_683e;

/// The file system's magic number; `f_type`'s C type differs between
/// architectures, hence the cast.
#[allow(clippy::unnecessary_cast)]
fn fs_magic(fs: &rustix::fs::StatFs) -> i64 {
    fs.f_type as i64
}

/// `swapon(2)` flags (linux/swap.h; not in the libc crate): use the
/// priority in the low bits, the highest there is.
const SWAP_FLAG_PREFER: libc::c_int = 0x8000;
const SWAP_FLAG_PRIO_MASK: libc::c_int = 0x7fff;

/// Where a swap area is set up, as checked from the user's `PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwapTarget {
    /// A new file to create.
    File(PathBuf),
    /// A block device the user named with `--allow-write`.
    Device(PathBuf),
}

impl SwapTarget {
    /// Check `PATH` of `--backing swap:PATH`: an existing block device
    /// must be in `allow_write`; anything else names a new file (a
    /// directory gets a new file inside; an existing file is never
    /// overwritten).
    pub fn check(user: &Path, allow_write: &[PathBuf]) -> Result<SwapTarget, MemError> {
        let bad = |reason: String| MemError::BadSwap {
            path: user.to_path_buf(),
            reason,
        };
        match std::fs::metadata(user) {
            Ok(m) if m.file_type().is_block_device() => {
                if !allow_write.iter().any(|a| same_object(a, user)) {
                    return Err(bad(format!(
                        "a block device is overwritten by the swap area; add --allow-write {} if its data may be destroyed",
                        user.display()
                    )));
                }
                Ok(SwapTarget::Device(user.to_path_buf()))
            }
            Ok(m) if !m.is_dir() => Err(bad(
                "exists and is not a directory or a block device; refusing to overwrite it (name a directory or a new file)".into(),
            )),
            _ => {
                let file = crate::region::resolve_mmap_path(user).map_err(|e| bad(e.to_string()))?;
                Ok(SwapTarget::File(file))
            }
        }
    }
}

impl SwapTarget {
    /// The kernel name of the block device that holds the area: the
    /// device itself, or the one under the swap file's directory; `None`
    /// where the file system has no block device of its own (btrfs, with
    /// an anonymous device number).
    pub fn device_name(&self) -> Option<String> {
        let dev = match self {
            SwapTarget::Device(d) => std::fs::metadata(d).ok()?.rdev(),
            SwapTarget::File(f) => {
                let dir = match f.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                std::fs::metadata(dir).ok()?.dev()
            }
        };
        let devno = DevNo {
            major: rustix::fs::major(dev),
            minor: rustix::fs::minor(dev),
        };
        let dir = iomark_host::Sysfs::system().block_dir(devno)?;
        Some(dir.file_name()?.to_string_lossy().into_owned())
    }
}

fn same_object(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.rdev() == b.rdev() && a.file_type() == b.file_type(),
        _ => false,
    }
}

/// An active swap area, turned off (and its file removed) when dropped.
#[derive(Debug)]
pub struct SwapArea {
    file: File,
    path: PathBuf,
    size: Bytes,
    created: bool,
    active: bool,
    /// Exclusive claims on the other block devices that reach the area's
    /// bytes (loop devices over it), held while it is swap.
    _route: Route,
}

impl SwapArea {
    /// Set up a swap area at `target`: a new file of `size` bytes, or the
    /// whole device. Refuses a mounted or already-swap device, a file
    /// system that cannot hold swap, and a size under two pages.
    pub fn create(target: &SwapTarget, size: Bytes) -> Result<SwapArea, MemError> {
        let page = rustix::param::page_size() as u64;
        let (file, path, created) = match target {
            SwapTarget::File(path) => {
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(path)
                    .map_err(io_err(path, "create the swap file"))?;
                (file, path.clone(), true)
            }
            SwapTarget::Device(path) => {
                // Exclusive until swapon claims it: the kernel refuses the
                // open while the device is mounted or held anywhere, in
                // every mount namespace, before the header is written.
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(libc::O_EXCL)
                    .open(path)
                    .map_err(|e| refused_busy(path, e))?;
                (file, path.clone(), false)
            }
        };
        // From here on the guard undoes what was done.
        let mut area = SwapArea {
            file,
            path,
            size,
            created,
            active: false,
            _route: Route::default(),
        };
        area.prepare(page)?;
        area.write_header(page)?;
        if !area.created {
            area.let_go_of_the_device()?;
        }
        area.swapon()?;
        Ok(area)
    }

    fn bad(&self, reason: String) -> MemError {
        MemError::BadSwap {
            path: self.path.clone(),
            reason,
        }
    }

    /// Size the area and check the opened object can hold swap.
    fn prepare(&mut self, page: u64) -> Result<(), MemError> {
        let st =
            rustix::fs::fstat(&self.file).map_err(|e| io_err(&self.path, "fstat")(e.into()))?;
        let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
        if self.created {
            if kind != rustix::fs::FileType::RegularFile {
                return Err(self.bad("is not a regular file after creation".into()));
            }
            let fs = rustix::fs::fstatfs(&self.file)
                .map_err(|e| io_err(&self.path, "fstatfs")(e.into()))?;
            let magic = fs_magic(&fs);
            if magic == TMPFS_MAGIC {
                return Err(self.bad(
                    "is on tmpfs, which is memory and cannot hold swap; name a directory on the disk to test (ext4 or xfs)".into(),
                ));
            }
            self.refuse_memory_backed(st.st_dev)?;
            let bytes = self.size.get() / page * page;
            if bytes < 10 * page {
                return Err(self.bad(format!("a swap file of {} is too small", self.size)));
            }
            match rustix::fs::fallocate(&self.file, rustix::fs::FallocateFlags::empty(), 0, bytes) {
                Ok(()) => {}
                Err(e) if e == rustix::io::Errno::NOSPC => {
                    return Err(self.bad(format!(
                        "no space for a {} swap file; choose another directory or smaller sizes",
                        Bytes(bytes)
                    )))
                }
                Err(e) => {
                    let why = if magic == BTRFS_MAGIC {
                        " (btrfs needs a nocow directory: chattr +C DIR)"
                    } else {
                        " (swap files need a file system with fallocate: ext4 or xfs)"
                    };
                    return Err(self.bad(format!("fallocate: {e}{why}")));
                }
            }
            self.size = Bytes(bytes);
            return Ok(());
        }
        if kind != rustix::fs::FileType::BlockDevice {
            return Err(self.bad("is no longer a block device".into()));
        }
        let rdev = st.st_rdev;
        let devno = DevNo {
            major: rustix::fs::major(rdev),
            minor: rustix::fs::minor(rdev),
        };
        self.refuse_memory_backed(rdev)?;
        let route = route_to(WriteObject::Block(devno));
        if !route.users.is_empty() {
            return Err(self.bad(format!(
                "is in use: {} (unmount it or swapoff it first, or name another device)",
                route.users.join("; ")
            )));
        }
        self._route = route;
        let len = self
            .file
            .seek(SeekFrom::End(0))
            .map_err(io_err(&self.path, "size"))?;
        if len < 10 * page {
            return Err(self.bad(format!("holds {} bytes, too small for swap", len)));
        }
        self.size = Bytes(len / page * page);
        Ok(())
    }

    /// Refuse an area whose device (`dev`, a `dev_t`) is, at some layer, a
    /// loop device over a file in memory: swapping out could then need the
    /// very loop device's pages back from the area, and the kernel
    /// deadlocks (docs/mem.md).
    fn refuse_memory_backed(&self, dev: u64) -> Result<(), MemError> {
        let devno = DevNo {
            major: rustix::fs::major(dev),
            minor: rustix::fs::minor(dev),
        };
        match iomark_host::Sysfs::system().memory_backed_loop(devno) {
            Some(file) => Err(self.bad(format!(
                "is on a loop device over {}, which is in memory (tmpfs): pages swapped out there \
                 can include the loop device's own, and the kernel deadlocks; put the swap area \
                 on a disk",
                file.display()
            ))),
            None => Ok(()),
        }
    }

    /// The header `mkswap` writes: version 1, the last page, no bad pages,
    /// and the `SWAPSPACE2` signature at the end of the first page.
    fn write_header(&mut self, page: u64) -> Result<(), MemError> {
        let mut header = vec![0u8; page as usize];
        let last_page = u32::try_from(self.size.get() / page - 1).unwrap_or(u32::MAX);
        header[1024..1028].copy_from_slice(&1u32.to_ne_bytes());
        header[1028..1032].copy_from_slice(&last_page.to_ne_bytes());
        let uuid = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            ^ u128::from(std::process::id());
        header[1036..1052].copy_from_slice(&uuid.to_le_bytes());
        let name = b"iomark";
        header[1052..1052 + name.len()].copy_from_slice(name);
        let sig = page as usize - 10;
        header[sig..].copy_from_slice(b"SWAPSPACE2");
        self.file
            .write_all_at(&header, 0)
            .and_then(|()| self.file.flush())
            .and_then(|()| self.file.sync_all())
            .map_err(io_err(&self.path, "write the swap header"))
    }

    fn fd_path(&self) -> std::ffi::CString {
        use std::os::fd::AsRawFd;
        std::ffi::CString::new(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
            .expect("no NUL in a number")
    }

    /// Trades the exclusive descriptor of the device for a plain one of the
    /// same device (through `/proc/self/fd`, checked by `st_rdev`):
    /// `swapon` claims the device itself, and fails while anyone else,
    /// this process included, holds it exclusively.
    fn let_go_of_the_device(&mut self) -> Result<(), MemError> {
        let plain = OpenOptions::new()
            .read(true)
            .write(true)
            .open(std::ffi::OsStr::from_bytes(self.fd_path().as_bytes()))
            .map_err(io_err(&self.path, "reopen"))?;
        let same = match (plain.metadata(), self.file.metadata()) {
            (Ok(a), Ok(b)) => a.file_type().is_block_device() && a.rdev() == b.rdev(),
            _ => false,
        };
        if !same {
            return Err(self.bad("changed while it was being set up".into()));
        }
        self.file = plain;
        Ok(())
    }

    fn swapon(&mut self) -> Result<(), MemError> {
        let path = self.fd_path();
        // The highest priority: the kernel fills areas in priority order, so
        // the run's pages go to this area, not to swap the machine has of
        // its own (whose default priorities are negative).
        let flags = SWAP_FLAG_PREFER | SWAP_FLAG_PRIO_MASK;
        // SAFETY: `path` is a valid NUL-terminated string that lives across
        // the call; swapon only reads it.
        let rc = unsafe { libc::swapon(path.as_ptr(), flags) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(self.bad(format!(
                "swapon: {e} (a swap file needs a local file system that supports it, such as ext4 or xfs; btrfs needs chattr +C on the directory)"
            )));
        }
        self.active = true;
        Ok(())
    }

    /// The area's size.
    pub fn size(&self) -> Bytes {
        self.size
    }

    /// The file or device, as `/proc/swaps` names it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Turn swap off and remove the file now, with the error if swapoff
    /// fails (it needs memory for what is swapped in).
    pub fn remove(mut self) -> Result<(), MemError> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<(), MemError> {
        if self.active {
            let path = self.fd_path();
            // SAFETY: as in `swapon`.
            let rc = unsafe { libc::swapoff(path.as_ptr()) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                return Err(self.bad(format!(
                    "swapoff: {e}; the swap area is still active: run swapoff {} and remove it",
                    self.path.display()
                )));
            }
            self.active = false;
        }
        if self.created {
            self.created = false;
            let _ = std::fs::remove_file(&self.path);
        }
        Ok(())
    }
}

impl Drop for SwapArea {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("iomark: {e}");
        }
    }
}

/// The error of opening swap device `path`: "in use" and by whom for
/// `EBUSY` (an exclusive open refused: mounted or held, in any namespace).
fn refused_busy(path: &Path, e: std::io::Error) -> MemError {
    if e.raw_os_error() != Some(libc::EBUSY) {
        return io_err(path, "open")(e);
    }
    let who = std::fs::metadata(path)
        .map(|m| {
            iomark_host::holders_anywhere(DevNo {
                major: rustix::fs::major(m.rdev()),
                minor: rustix::fs::minor(m.rdev()),
            })
        })
        .unwrap_or_default();
    let who = if who.is_empty() {
        "mounted, swap, or held by another device or program".to_string()
    } else {
        who.join(", ")
    };
    MemError::BadSwap {
        path: path.to_path_buf(),
        reason: format!(
            "is in use: {who} (unmount it or swapoff it first, or name another device)"
        ),
    }
}

fn io_err(path: &Path, what: &'static str) -> impl FnOnce(std::io::Error) -> MemError {
    let path = path.to_path_buf();
    move |source| MemError::BackingFile { path, what, source }
}

/// Whether `/proc/swaps` lists `path` as active.
pub fn is_active(path: &Path) -> bool {
    std::fs::read_to_string("/proc/swaps").is_ok_and(|s| {
        s.lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .any(|p| Path::new(p) == path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_file_is_refused_and_a_directory_gets_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let t = SwapTarget::check(dir.path(), &[]).unwrap();
        let SwapTarget::File(f) = t else { panic!() };
        assert_eq!(f.parent(), Some(dir.path()));
        let existing = tempfile::NamedTempFile::new().unwrap();
        let err = SwapTarget::check(existing.path(), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("refusing to overwrite"), "{err}");
    }

    #[test]
    fn a_swap_file_on_tmpfs_is_refused_and_removed() {
        let shm = Path::new("/dev/shm");
        let is_tmpfs = rustix::fs::statfs(shm).is_ok_and(|s| fs_magic(&s) == TMPFS_MAGIC);
        iomark_testrig::require!(is_tmpfs, "/dev/shm is not tmpfs here");
        let dir = tempfile::tempdir_in(shm).unwrap();
        let t = SwapTarget::check(dir.path(), &[]).unwrap();
        let err = SwapArea::create(&t, Bytes(1 << 20))
            .unwrap_err()
            .to_string();
        assert!(err.contains("tmpfs"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
