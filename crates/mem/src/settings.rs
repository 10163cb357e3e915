//! A memory job from what the user gave: the defaults and every check in
//! one place, so the command line only parses.
//!
//! The messages name the flags of `iomark mem` (`--threads`, `--backing`,
//! ...): they are the vocabulary of the job, whatever front end fills it in.

use std::path::{Path, PathBuf};

use iomark_model::device::HostInfo;
use iomark_model::mem::{
    Advice, Backing, HimenoLength, HimenoSpec, MemJobSpec, MemKernelSpec, MemOutcome, MemRun,
    StencilSpec, StreamSpec,
};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{RunBody, RunDocument, RunStatus};

use crate::{himeno, sys, MemError};

/// The smallest `--mem-limit`: the process itself must fit.
pub const MIN_MEM_LIMIT: Bytes = Bytes(4 * Bytes::MIB);

/// Himeno's own measured time when neither sweeps nor seconds are given.
pub const DEFAULT_HIMENO_SECONDS: u64 = 60;

/// What the user said about where and how any kernel runs.
#[derive(Debug, Clone, Default)]
pub struct MemSettings {
    /// Worker threads; `None` takes the CPUs this process may use.
    pub threads: Option<u32>,
    /// `heap`, or `mmap:PATH` for a file in (or at) `PATH`.
    pub backing: String,
    /// madvise policy of a file mapping.
    pub advice: Advice,
    /// Memory cgroup limit for the kernel.
    pub mem_limit: Option<Bytes>,
    /// Run the all-in-memory case first and report relative time.
    pub relative: bool,
}

/// A checked memory job.
#[derive(Debug, Clone)]
pub struct MemPlan {
    /// The job.
    pub spec: MemJobSpec,
    /// Report the run as relative to the all-in-memory one.
    pub relative: bool,
    /// The directory of an mmap backing file, whose device chain is
    /// recorded.
    pub backing_dir: Option<PathBuf>,
}

impl MemSettings {
    /// Check the settings and fill in the defaults for `kernel`.
    pub fn build(&self, kernel: MemKernelSpec) -> Result<MemPlan, MemError> {
        let threads = match self.threads {
            Some(0) => return invalid("--threads must be at least 1"),
            // The upper bound (64 per CPU, at most 4096) is checked with the
            // memory before anything is allocated (job::check_limits).
            Some(t) => t,
            None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        };
        let (backing, backing_dir) = if self.backing == "heap" {
            (Backing::Heap, None)
        } else if let Some(path) = self.backing.strip_prefix("mmap:") {
            let file = crate::region::resolve_mmap_path(Path::new(path))?;
            let dir = file.parent().map(Path::to_path_buf);
            let path = file.display().to_string();
            (Backing::Mmap { path }, dir)
        } else {
            return invalid(format!(
                "--backing {:?} is not heap or mmap:PATH (e.g. --backing mmap:/mnt/ssd)",
                self.backing
            ));
        };
        if let Some(limit) = self.mem_limit {
            if limit < MIN_MEM_LIMIT {
                return invalid(format!(
                    "--mem-limit {limit} is too small for the process itself; use at least 4MiB"
                ));
            }
        }
        if self.relative && self.mem_limit.is_none() && backing == Backing::Heap {
            return invalid("--relative compares a constrained run with the all-in-memory one; add --mem-limit SIZE or --backing mmap:PATH");
        }
        Ok(MemPlan {
            spec: MemJobSpec {
                kernel,
                threads,
                backing,
                advice: self.advice,
                mem_limit: self.mem_limit,
            },
            relative: self.relative,
            backing_dir,
        })
    }
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, MemError> {
    Err(MemError::BadSpec(msg.into()))
}

/// STREAM: elements per array (`None`: STREAM's size rule), passes, and
/// non-temporal stores (`None`: on when an array is larger than the
/// last-level cache, or the cache is unknown; off for arrays that fit,
/// where streaming stores would push them out and slow every pass).
pub fn stream(
    size: Option<u64>,
    ntimes: u32,
    nt_stores: Option<bool>,
) -> Result<MemKernelSpec, MemError> {
    if ntimes < 2 {
        return invalid(format!(
            "--ntimes {ntimes} is too small: the first pass is not counted, so use at least 2"
        ));
    }
    let array_len = size.unwrap_or_else(default_stream_len);
    let nt_stores = nt_stores.unwrap_or_else(|| {
        sys::host()
            .llc
            .is_none_or(|llc| array_len.saturating_mul(8) > llc.get())
    });
    Ok(MemKernelSpec::Stream(StreamSpec {
        array_len,
        ntimes,
        nt_stores,
    }))
}

/// STREAM's size rule: each array 4 x the last-level cache, at least
/// STREAM's 10M, and no more than half the available memory in all.
pub fn default_stream_len() -> u64 {
    let host = sys::host();
    let rule = host.llc.map_or(0, |l| (4 * l.get()).div_ceil(8));
    let len = rule.max(10_000_000);
    match sys::mem_available() {
        Some(avail) => len.min(avail.get() / 2 / 24).max(1_000_000),
        None => len,
    }
}

/// The 2D stencil: mask width (3 or 15), grid side and sweeps.
pub fn stencil(mask: u32, n: u64, sweeps: u32) -> Result<MemKernelSpec, MemError> {
    if mask != 3 && mask != 15 {
        return invalid(format!(
            "--mask {mask} is not supported: use 3 or 15 (their weights are exact, which the check needs)"
        ));
    }
    if n <= mask as u64 {
        return invalid(format!(
            "--n {n} leaves no interior for a {mask}x{mask} mask; use --n {} or more",
            mask + 1
        ));
    }
    if sweeps == 0 {
        return invalid("--sweeps must be at least 1");
    }
    Ok(MemKernelSpec::Stencil(StencilSpec { n, mask, sweeps }))
}

/// Himeno: a grid name or `IxJxK`, and either exactly `iterations` sweeps
/// or Himeno's own timed scheme of `seconds` (60 by default).
pub fn himeno(
    grid: &str,
    iterations: Option<u32>,
    seconds: Option<f64>,
) -> Result<MemKernelSpec, MemError> {
    let grid = himeno::parse_grid(grid).map_err(|e| MemError::BadSpec(format!("--grid: {e}")))?;
    let length = match (iterations, seconds) {
        (Some(0), _) => return invalid("--iterations must be at least 1"),
        (Some(n), _) => HimenoLength::Iterations(n),
        (None, Some(s)) if !(s > 0.0 && s.is_finite()) => {
            return invalid(format!("--seconds {s} must be a positive number, e.g. 60"))
        }
        (None, Some(s)) => HimenoLength::Target(Nanos((s * 1e9) as u64)),
        (None, None) => HimenoLength::Target(Nanos::from_secs(DEFAULT_HIMENO_SECONDS)),
    };
    Ok(MemKernelSpec::Himeno(HimenoSpec { grid, length }))
}

impl MemPlan {
    /// The result document of a finished run, for `--json` and the store;
    /// the device chain of an mmap backing file's directory is recorded.
    pub fn document(
        &self,
        run: MemRun,
        command_line: Vec<String>,
        started_at_ms: u64,
    ) -> RunDocument {
        let status = match &run.outcome {
            MemOutcome::Completed { result, .. } if !result.validation().is_failed() => {
                RunStatus::Complete
            }
            MemOutcome::Interrupted => RunStatus::Interrupted,
            _ => RunStatus::Failed,
        };
        let device = self
            .backing_dir
            .as_deref()
            .and_then(|d| iomark_host::DeviceChain::for_path(d).ok())
            .map(iomark_host::DeviceChain::into_report);
        RunDocument {
            started_at_ms,
            status,
            host: Some(<HostInfo as iomark_host::HostInfoExt>::collect()),
            device,
            ..RunDocument::iomark(command_line, RunBody::Mem(run))
        }
    }
}
