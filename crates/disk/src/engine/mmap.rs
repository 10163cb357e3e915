//! mmap engines: the region is mapped shared; reads copy out of the
//! mapping, writes copy into it and then msync the written pages, with
//! MS_SYNC (wait for the device: the paper's "M_SYNC-IO") or MS_ASYNC (only
//! schedule write-back: "M_ASYNC-IO").
//!
//! The mapping is the one place outside io_uring and the buffer allocator
//! that needs `unsafe`: a mapped file can change under us (another process
//! may write it), which Rust's references cannot express, so the mapping is
//! only touched through raw copies.
//!
//! A file truncated by another process while it is mapped would end the
//! process with SIGBUS at the next access past its new end; the mapping is
//! registered with [`iomark_host::sigbus`], which turns that into an error.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

use rustix::mm::{MapFlags, MsyncFlags, ProtFlags};

use super::{Dir, Done, Engine, EngineSetup, IoUnit, Queued};
use crate::DiskError;
use iomark_host::sigbus::Watch;

/// How writes are flushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flush {
    /// msync(MS_SYNC) after each write.
    Sync,
    /// msync(MS_ASYNC) after each write.
    Async,
}

/// A shared mapping of the job's region.
#[derive(Debug)]
pub(crate) struct Mmap {
    base: NonNull<u8>,
    len: usize,
    flush: Flush,
    page: usize,
    /// Taken (unregistered) in Drop before the mapping goes.
    watch: Option<Watch>,
    /// The mapped file (the thread's own description), to name it when it
    /// shrinks.
    file: File,
}

impl Mmap {
    /// Map `setup.region` bytes of the target, read-write when it was
    /// opened for writing.
    pub(crate) fn new(setup: &EngineSetup, flush: Flush) -> Result<Self, DiskError> {
        let len = usize::try_from(setup.region).map_err(|_| DiskError::Engine {
            engine: "mmap",
            message: "region does not fit the address space".into(),
        })?;
        let prot = if setup.writable {
            ProtFlags::READ | ProtFlags::WRITE
        } else {
            ProtFlags::READ
        };
        let file = setup.file.own()?;
        // SAFETY: a fresh shared mapping at an address the kernel chooses;
        // it overlaps nothing Rust owns. It is unmapped in Drop.
        let ptr = unsafe {
            rustix::mm::mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, &file, 0)
        }
        .map_err(|e| DiskError::Engine {
            engine: "mmap",
            message: format!("mmap of {len} bytes failed: {e}"),
        })?;
        let base = NonNull::new(ptr.cast::<u8>()).ok_or(DiskError::Engine {
            engine: "mmap",
            message: "mmap returned a null mapping".into(),
        })?;
        let watch = match Watch::new(ptr as usize, len) {
            Ok(w) => w,
            Err(e) => {
                // SAFETY: exactly the mapping made above, not used since.
                let _ = unsafe { rustix::mm::munmap(ptr, len) };
                return Err(DiskError::Engine {
                    engine: "mmap",
                    message: format!("cannot install the SIGBUS handler: {e}"),
                });
            }
        };
        // Say how the mapping will be used, as fio does (fadvise_hint): a
        // page fault otherwise reads the device's whole read-ahead window
        // around it (8 MiB on this project's VM), which for random 4 KiB
        // I/O under a memory limit reads a thousand times the data used.
        let advice = if setup.random {
            rustix::mm::Advice::Random
        } else {
            rustix::mm::Advice::Sequential
        };
        // SAFETY: the range is exactly the mapping just made; advice only
        // changes how the kernel pages it. It is a hint: failure is harmless.
        let _ = unsafe { rustix::mm::madvise(ptr, len, advice) };
        Ok(Mmap {
            base,
            len,
            flush,
            page: rustix::param::page_size(),
            watch: Some(watch),
            file,
        })
    }

    /// The error for a mapping whose file was truncated under it.
    fn shrank(&self, offset: u64) -> DiskError {
        let path = std::fs::read_link(format!("/proc/self/fd/{}", self.file.as_raw_fd()))
            .map_or_else(|_| "the target".to_string(), |p| p.display().to_string());
        let now = self
            .file
            .metadata()
            .map_or_else(|_| String::new(), |m| format!(", {} B long now", m.len()));
        DiskError::Engine {
            engine: "mmap",
            message: format!(
                "the file shrank under the mapping: {path} was truncated by another process \
                 while it was mapped (the I/O at offset {offset} of the {}-byte region reached \
                 past its end{now}); \
                 keep other programs off the file during the job",
                self.len
            ),
        }
    }
}

impl Engine for Mmap {
    fn queue(&mut self, mut unit: IoUnit) -> Result<Queued, DiskError> {
        let off = unit.offset as usize;
        let n = unit.len as usize;
        if off.checked_add(n).is_none_or(|end| end > self.len) {
            return Ok(Queued::Completed(Done {
                unit,
                result: Err(libc::EINVAL),
            }));
        }
        // SAFETY: off..off+n lies inside the mapping (checked above), the
        // buffer holds at least n bytes, and the two never overlap (the
        // buffer is heap memory, the mapping is a file mapping).
        let result = unsafe {
            let at = self.base.as_ptr().add(off);
            match unit.dir {
                Dir::Read => {
                    std::ptr::copy_nonoverlapping(at, unit.buf.as_mut_ptr(), n);
                    Ok(unit.len)
                }
                Dir::Write => {
                    std::ptr::copy_nonoverlapping(unit.buf.as_slice().as_ptr(), at, n);
                    let start = off / self.page * self.page;
                    let flags = match self.flush {
                        Flush::Sync => MsyncFlags::SYNC,
                        Flush::Async => MsyncFlags::ASYNC,
                    };
                    rustix::mm::msync(self.base.as_ptr().add(start).cast(), off + n - start, flags)
                        .map(|()| unit.len)
                        .map_err(|e| e.raw_os_error())
                }
            }
        };
        if self.watch.as_ref().is_some_and(Watch::shrank) {
            return Err(self.shrank(unit.offset));
        }
        Ok(Queued::Completed(Done { unit, result }))
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // Unregistered first: once unmapped, the range may be reused.
        self.watch.take();
        // SAFETY: base/len is exactly the mapping made in new, unmapped once.
        unsafe {
            let _ = rustix::mm::munmap(self.base.as_ptr().cast(), self.len);
        }
    }
}
