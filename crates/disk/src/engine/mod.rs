//! The engine seam: fio's `ioengine_ops`, in Rust.
//!
//! An engine only moves bytes. The runner owns time, counts and depth: it
//! stamps each [`IoUnit`] before handing it over and takes the completion
//! time when [`Done`] comes back, so every engine is measured the same way.
//!
//! * A synchronous engine implements [`Engine::queue`] only, and always
//!   answers [`Queued::Completed`].
//! * An asynchronous engine answers [`Queued::InFlight`], keeps the unit
//!   (and so its buffer) until the kernel is done with it, and hands it back
//!   from [`Engine::reap`]. The runner calls [`Engine::commit`] to hand what
//!   was queued to the kernel (after each I/O, or after each batch); `reap`
//!   must also submit anything still queued.
//!   Dropping an asynchronous engine waits for every unit in flight, and
//!   memory it registered with the kernel stays mapped until the engine is
//!   gone, whatever the runner does with its units.
//!
//! An engine stays on the thread that built it (the trait does not ask for
//! `Send`): io_uring's rings can only be waited on, and so drained on drop,
//! from the thread that made them.
//!
//! Units own their buffers and move by value: an engine can never hold a
//! buffer the runner is about to reuse (tokio-uring's owned-buffer rule).

mod mmap;
pub(crate) mod null;
mod psync;
#[cfg(test)]
mod tests;
mod uring;

use std::time::Instant;

use iomark_model::disk::EngineKind;

use crate::buffer::AlignedBuf;
use crate::target::TargetFile;
use crate::DiskError;

pub use uring::io_uring_available;

/// Which way an I/O moves data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    /// From the target into the buffer.
    Read,
    /// From the buffer to the target.
    Write,
}

/// One I/O: a buffer, where it goes, and when it was issued.
#[derive(Debug)]
pub(crate) struct IoUnit {
    /// The data; `len` bytes of it are used.
    pub(crate) buf: AlignedBuf,
    /// Byte offset in the target.
    pub(crate) offset: u64,
    /// Bytes to move.
    pub(crate) len: u32,
    /// Read or write.
    pub(crate) dir: Dir,
    /// Index of the unit in its thread's pool, `0..depth`; engines may use
    /// it as a key (io_uring's user_data and registered buffer index).
    pub(crate) slot: u32,
    /// Set by the runner just before the unit is queued.
    pub(crate) issued: Instant,
}

/// A finished I/O: the unit back, and how many bytes moved or the errno.
#[derive(Debug)]
pub(crate) struct Done {
    /// The unit, to be reused.
    pub(crate) unit: IoUnit,
    /// Bytes moved, or the OS error.
    pub(crate) result: Result<u32, i32>,
}

/// What `queue` did with a unit.
#[derive(Debug)]
pub(crate) enum Queued {
    /// The I/O is finished (synchronous engines).
    Completed(Done),
    /// The I/O is in flight; it comes back from `reap`.
    InFlight,
}

/// An I/O engine bound to one open target, used by one thread: the one
/// that built it.
pub(crate) trait Engine {
    /// Hand one I/O to the engine.
    fn queue(&mut self, unit: IoUnit) -> Result<Queued, DiskError>;

    /// Submit what was queued, without waiting for anything (fio's
    /// `commit`). Returns how many completions arrived during the call:
    /// I/Os the kernel finished within their submission (page-cache hits,
    /// zram), which is how the runner chooses its batch.
    fn commit(&mut self) -> Result<usize, DiskError> {
        Ok(0)
    }

    /// Submit what was queued and wait until at least `min` I/Os are done,
    /// appending them to `out`. Returns how many were appended.
    fn reap(&mut self, _min: usize, _out: &mut Vec<Done>) -> Result<usize, DiskError> {
        Ok(0)
    }

    /// Called once before the first I/O with every unit of the pool, so an
    /// engine can register buffers with the kernel.
    fn register_buffers(&mut self, _units: &mut [IoUnit]) -> Result<(), DiskError> {
        Ok(())
    }
}

/// What an engine needs to be built.
#[derive(Debug, Clone)]
pub(crate) struct EngineSetup {
    /// The target: each thread's engine takes a descriptor of its own.
    pub(crate) file: TargetFile,
    /// Size of the region the job works on (for mapping engines).
    pub(crate) region: u64,
    /// I/Os kept in flight per thread.
    pub(crate) depth: u32,
    /// Whether the target was opened for writing.
    pub(crate) writable: bool,
    /// Whether offsets are random, so an engine can tell the kernel not to
    /// read ahead (fio's `fadvise_hint`, on by default).
    pub(crate) random: bool,
}

/// Build the engine `kind` for one thread.
pub(crate) fn build(kind: EngineKind, setup: &EngineSetup) -> Result<Box<dyn Engine>, DiskError> {
    Ok(match kind {
        EngineKind::Psync => Box::new(psync::Psync::new(setup)?),
        EngineKind::IoUring => Box::new(uring::Uring::new(setup)?),
        EngineKind::MmapSync => Box::new(mmap::Mmap::new(setup, mmap::Flush::Sync)?),
        EngineKind::MmapAsync => Box::new(mmap::Mmap::new(setup, mmap::Flush::Async)?),
        EngineKind::Null => Box::new(null::Null::default()),
    })
}

/// Every engine compiled in, each with whether it can run here and, when
/// not, why (`iomark engines`).
pub fn engine_availability() -> Vec<(EngineKind, Result<(), String>)> {
    EngineKind::ALL
        .into_iter()
        .map(|e| {
            let available = match e {
                EngineKind::IoUring => io_uring_available(),
                _ => Ok(()),
            };
            (e, available)
        })
        .collect()
}
