//! The storage benchmark: engines, targets, workloads and the runner.
//!
//! What the crate offers, all the command line and the MPI ranks need:
//!
//! * [`lifecycle`] takes a disk run from its plan to its recorded
//!   document: [`lifecycle::run`] alone, or
//!   [`lifecycle::run_coordinated`] as one of the processes a
//!   [`Coordinator`](lifecycle::Coordinator) joins (an MPI job's ranks);
//! * [`plan`] turns the user's settings ([`plan::DiskSettings`]) into a
//!   checked [`plan::DiskPlan`], and holds what a run measured
//!   ([`plan::DiskOutcome`]);
//! * [`job`] is a custom job's settings ([`job::JobSettings`]) and
//!   [`profiles`] the classic profiles' ([`profiles::ProfileSettings`],
//!   by [`profiles::ProfileName`]): with the `clap` feature, the arguments
//!   of `iomark disk`;
//! * [`fio_job`] reads a fio job file into a run plan;
//! * [`target`] opens test files, existing files and block devices, with
//!   the safety rules (no writes to a device or file not named for
//!   writing, no writes to a mounted or held device, no test file left
//!   behind), and sweeps away test files a killed run left;
//! * [`run_job`] runs one [`DiskJobSpec`] on an open target, telling an
//!   [`Observer`] ([`Quiet`]: none) of its progress and of each
//!   [`Interval`], whose [`LatencyCounts`] processes add up;
//! * [`engine_availability`] and [`io_uring_available`] say which engines
//!   can run here;
//! * [`DiskError`] is why a job could not run.
//!
//! Everything else is the crate's own, `pub(crate)` at most. This crate
//! knows nothing of the store, the report or the command line.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use iomark_disk::target::{DirectMode, OpenTarget, TargetRequest, TestFilePrep};
//! use iomark_disk::{run_job, Quiet};
//! use iomark_model::disk::{DataPattern, DiskJobSpec, EngineKind, RwMode};
//! use iomark_model::units::{Bytes, Nanos};
//!
//! let stop = AtomicBool::new(false);
//! let target = OpenTarget::open(&TargetRequest {
//!     path: ".".into(), size: Some(Bytes(64 << 20)), default_size: Bytes(1 << 30),
//!     write: false, allow_write: vec![], direct: DirectMode::Auto,
//!     data: DataPattern::Random, seed: 1, io_sizes: vec![Bytes(4096)],
//!     prep: TestFilePrep::Filled,
//! }, &stop)?;
//! let spec = DiskJobSpec {
//!     name: "custom".into(), rw: RwMode::RandRead, bs: Bytes(4096), iodepth: 32, iodepth_batch: 1,
//!     numjobs: 1, size: Bytes(64 << 20), runtime: Some(Nanos::from_secs(5)),
//!     ramp: Nanos(0), engine: EngineKind::IoUring, direct: true,
//!     data: DataPattern::Random, rwmix_read: 70, seed: 1, steady_state: None,
//! };
//! let result = run_job(&spec, &target, &stop, &mut Quiet)?;
//! println!("{:.1} MB/s", result.total_bw().mb_per_sec());
//! # Ok::<(), iomark_disk::DiskError>(())
//! ```
#![deny(missing_docs)]

mod across_ranks;
mod buffer;
mod checks;
mod device_seen;
mod engine;
pub mod fio_job;
pub mod job;
mod knee;
pub mod lifecycle;
mod pattern;
pub mod plan;
pub mod profiles;
mod repeat;
mod runner;
pub mod target;
mod verify;

// The engines, the runner's threads and the verify stamps are machinery:
// a caller runs a whole run through `lifecycle`, or one job through
// `run_job`, so the engine seam and the runner can change without it.
pub use engine::{engine_availability, io_uring_available};
pub use runner::{run_job, Interval, LatencyCounts, Observer, Quiet};

use std::path::{Path, PathBuf};

use iomark_model::disk::{DiskJobSpec, EngineKind};
use iomark_model::units::Bytes;

use engine::Dir;

/// Why a disk job could not run; each message says what to do about it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiskError {
    /// The job or its options do not make sense.
    #[error("{0}")]
    Invalid(String),
    /// The target cannot be used as asked.
    #[error("{}: {message}", path.display())]
    Target {
        /// What was named.
        path: PathBuf,
        /// What is wrong, and what to do.
        message: String,
    },
    /// Refused to protect data.
    #[error("refused: {0}")]
    Refused(String),
    /// Not enough free space for the test file.
    #[error(
        "{}: a {needed} test file does not fit in the {available} free: \
         lower --size or free some space",
        path.display()
    )]
    NoSpace {
        /// The directory.
        path: PathBuf,
        /// Bytes the test file needs.
        needed: Bytes,
        /// Bytes free for this user.
        available: Bytes,
    },
    /// O_DIRECT was asked for and the file system cannot do it.
    #[error(
        "{}: the file system does not support direct I/O (O_DIRECT): \
         use --buffered, and read the result as a page-cache figure",
        .0.display()
    )]
    NoDirectIo(PathBuf),
    /// An I/O failed.
    #[error("{message}")]
    Io {
        /// The OS error number.
        errno: i32,
        /// What failed, where, and a hint.
        message: String,
    },
    /// An engine could not be set up or failed.
    #[error("{engine} engine: {message}")]
    Engine {
        /// The engine's name.
        engine: &'static str,
        /// What went wrong.
        message: String,
    },
    /// Ctrl-C before the job could start (the test file was removed).
    #[error("interrupted")]
    Interrupted,
    /// A worker thread panicked; this is a bug in iomark.
    #[error("a worker thread panicked (a bug in iomark: please report it)")]
    WorkerPanicked,
}

impl DiskError {
    fn target(path: &Path, message: impl Into<String>) -> Self {
        DiskError::Target {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    fn io(errno: i32, dir: Dir, offset: u64, spec: &DiskJobSpec) -> Self {
        let err = std::io::Error::from_raw_os_error(errno);
        let what = match dir {
            Dir::Read => "read",
            Dir::Write => "write",
        };
        let hint = match errno {
            // fio's hint on the first failed direct I/O.
            libc::EINVAL if spec.direct => {
                ": direct I/O needs the block size and offsets aligned to the \
                 device's logical block size; use a --bs that is a multiple of it, or --buffered"
            }
            libc::ENOSPC => ": the device is full; lower --size",
            libc::EIO => ": the device reported an error; check dmesg",
            _ => "",
        };
        DiskError::Io {
            errno,
            message: format!(
                "{what} of {} at offset {offset} failed: {err}{hint}",
                spec.bs
            ),
        }
    }

    fn short_io(dir: Dir, offset: u64, spec: &DiskJobSpec) -> Self {
        DiskError::Io {
            errno: 0,
            message: format!(
                "{} of {} at offset {offset} moved no data: the target ended early; lower --size",
                if dir == Dir::Read { "read" } else { "write" },
                spec.bs
            ),
        }
    }
}

/// The most threads a job may start: far beyond what any device needs, and
/// low enough that a mistyped number fails here, not in the kernel.
const MAX_NUMJOBS: u32 = 1024;
/// The deepest queue a thread may keep (io_uring's own ring limit is 32768
/// submission entries; deeper queues gain nothing on any device).
const MAX_IODEPTH: u32 = 65_536;
/// The deepest io_uring queue: the kernel's ring holds at most 32768
/// submission entries (`IORING_MAX_ENTRIES`), and a ring is sized to the
/// depth's next power of two.
const MAX_IO_URING_DEPTH: u32 = 32_768;
/// The largest single I/O.
const MAX_BS: Bytes = Bytes(1 << 30);

/// A count setting (`flag`) from 1 to `max`; `too_big` says what more
/// than `max` means.
fn check_count(flag: &str, value: u32, max: u32, too_big: &str) -> Result<(), DiskError> {
    if value == 0 {
        return Err(DiskError::Invalid(format!("{flag} must be at least 1")));
    }
    if value > max {
        return Err(DiskError::Invalid(format!(
            "{flag} {value} is {too_big}: use at most {max}"
        )));
    }
    Ok(())
}

/// Check a job on its own, before any target is opened or created: sizes,
/// depths, threads and the memory their buffers need (`numjobs x iodepth
/// x bs` against the memory available now), so nothing is written for a
/// job that cannot run.
fn validate_spec(spec: &DiskJobSpec) -> Result<(), DiskError> {
    if spec.bs.get() == 0 {
        return Err(DiskError::Invalid(
            "--bs must be larger than 0: try --bs 4k".into(),
        ));
    }
    if spec.bs > MAX_BS {
        return Err(DiskError::Invalid(format!(
            "--bs {} is too large: use at most {MAX_BS}",
            spec.bs
        )));
    }
    check_count("--iodepth", spec.iodepth, MAX_IODEPTH, "too deep")?;
    if spec.engine == EngineKind::IoUring {
        check_count(
            "--iodepth",
            spec.iodepth,
            MAX_IO_URING_DEPTH,
            "deeper than an io_uring ring can be",
        )?;
    }
    check_count("--numjobs", spec.numjobs, MAX_NUMJOBS, "too many threads")?;
    if spec.rwmix_read > 100 {
        return Err(DiskError::Invalid(
            "--rwmix-read is a percentage: 0 to 100".into(),
        ));
    }
    // Mapped engines copy through one buffer per thread, not per slot.
    let slots = if spec.engine.is_mapped() {
        u64::from(spec.numjobs)
    } else {
        u64::from(spec.numjobs) * u64::from(spec.iodepth)
    };
    let buffers = slots.saturating_mul(spec.bs.get());
    if let Some(available) = iomark_host::mem_available() {
        if buffers > available.get() {
            return Err(DiskError::Invalid(format!(
                "--numjobs {} x --iodepth {} x --bs {} needs {} of buffers, more than the {} \
                 of memory available: lower --numjobs, --iodepth or --bs",
                spec.numjobs,
                spec.iodepth,
                spec.bs,
                Bytes(buffers),
                available
            )));
        }
    }
    Ok(())
}

/// Check a job against its target before running it: everything
/// [`validate_spec`] checks, the region and direct-I/O alignment.
fn validate_job(spec: &DiskJobSpec, target: &target::OpenTarget) -> Result<(), DiskError> {
    validate_spec(spec)?;
    let lbs = u64::from(target.info.logical_block_size);
    if target.direct && !spec.bs.get().is_multiple_of(lbs) {
        return Err(DiskError::Invalid(format!(
            "--bs {} is not a multiple of the logical block size {lbs} B of {}: \
             direct I/O needs that; use a multiple of {lbs}, or --buffered",
            spec.bs, target.info.path
        )));
    }
    if spec.size.get().min(target.info.size.get()) < spec.bs.get() {
        return Err(DiskError::Invalid(format!(
            "the region ({}) is smaller than one block ({}): raise --size or lower --bs",
            Bytes(spec.size.get().min(target.info.size.get())),
            spec.bs
        )));
    }
    Ok(())
}
