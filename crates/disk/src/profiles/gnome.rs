//! GNOME Disks' benchmark (`gdu-benchmark-dialog.c`), on a block device, a
//! file or a test file.
//!
//! * Transfer rate: `samples` reads of `sample_size` at offsets
//!   `n * size / samples` rounded down to a page, each preceded by an
//!   untimed one-page read at the same offset; each timed read is one
//!   `read` on a descriptor opened O_DIRECT|O_SYNC, timed with the
//!   monotonic clock. With `write`, the data just read is written back to
//!   the same place and fsynced (timed together), so contents are kept.
//! * Access time: `access_samples` one-page reads at uniformly drawn
//!   page-aligned offsets over the whole target, seed 42, timed one by one.
//!
//! Averages are arithmetic means of the samples, as GNOME Disks shows them.

use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use iomark_model::profile::{GnomeAccessSample, GnomeResult, GnomeTransferSample, ProfileResult};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};
use iomark_model::{Warning, WarningKind};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::common::shortened;
use super::settings::{ProfileSettings, Setting};
use super::{ProfileObserver, ProfileOutcome};
use crate::buffer::AlignedBuf;
use crate::target::OpenTarget;
use crate::DiskError;
use iomark_pipeline::Progress;

/// GNOME Disks' page: the alignment of every offset and the access read size.
pub(crate) const PAGE: u64 = 4096;
/// GNOME Disks' fixed seed of the access-time offsets.
const ACCESS_SEED: u64 = 42;
/// Default transfer-rate samples (`num-samples`).
const DEFAULT_SAMPLES: u32 = 100;
/// Default sample size (`sample-size-mib`).
const DEFAULT_SAMPLE_SIZE: Bytes = Bytes(10 << 20);
/// Default access-time samples (`num-access-samples`).
const DEFAULT_ACCESS_SAMPLES: u32 = 1000;
/// `--quick` transfer-rate samples.
const QUICK_SAMPLES: u32 = 20;
/// `--quick` access-time samples.
const QUICK_ACCESS_SAMPLES: u32 = 200;

/// How to run the benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct GnomeOptions {
    /// Transfer-rate samples.
    pub(crate) samples: u32,
    /// Bytes per transfer-rate sample.
    pub(crate) sample_size: Bytes,
    /// Access-time samples.
    pub(crate) access_samples: u32,
    /// Write back each sample (needs a writable target).
    pub(crate) write: bool,
    /// Whether `--quick` lowered the sample counts.
    quick: bool,
    /// Leave the page cache as the transfer-rate test left it for the
    /// access-time test.
    keep_cache: bool,
}

impl GnomeOptions {
    /// GNOME Disks' defaults (without the write test, which needs asking
    /// for), or the `--quick` counts.
    fn defaults(quick: bool) -> Self {
        GnomeOptions {
            samples: if quick {
                QUICK_SAMPLES
            } else {
                DEFAULT_SAMPLES
            },
            sample_size: DEFAULT_SAMPLE_SIZE,
            access_samples: if quick {
                QUICK_ACCESS_SAMPLES
            } else {
                DEFAULT_ACCESS_SAMPLES
            },
            write: false,
            quick,
            keep_cache: false,
        }
    }
}

/// The offset of transfer-rate sample `n`: `n * size / samples`, rounded
/// down to a page, and moved back so the sample ends inside the target.
fn sample_offset(n: u32, samples: u32, size: u64, sample_size: u64) -> u64 {
    let at = (u128::from(n) * u128::from(size) / u128::from(samples.max(1))) as u64;
    let last = size.saturating_sub(sample_size) / PAGE * PAGE;
    (at / PAGE * PAGE).min(last)
}

/// The offsets of the access-time test: uniform over the target's whole
/// pages, from the fixed seed, so runs repeat.
fn access_offsets(count: u32, size: u64) -> Vec<u64> {
    let pages = (size / PAGE).max(1);
    let mut rng = SmallRng::seed_from_u64(ACCESS_SEED);
    (0..count)
        .map(|_| rng.random_range(0..pages) * PAGE)
        .collect()
}

fn io_err(what: &str, offset: u64, e: impl std::fmt::Display, errno: i32) -> DiskError {
    DiskError::Io {
        errno,
        message: format!("{what} at offset {offset} failed: {e}"),
    }
}

/// Read exactly `buf.len()` bytes at `offset`.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> Result<(), DiskError> {
    let mut done = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        let n = rustix::io::pread(file, &mut buf[done..], at)
            .map_err(|e| io_err("read", at, e, e.raw_os_error()))?;
        if n == 0 {
            return Err(io_err("read", at, "end of target", 0));
        }
        done += n;
    }
    Ok(())
}

/// Write all of `buf` at `offset`.
fn write_at(file: &File, buf: &[u8], offset: u64) -> Result<(), DiskError> {
    let mut done = 0;
    while done < buf.len() {
        let at = offset + done as u64;
        let n = rustix::io::pwrite(file, &buf[done..], at)
            .map_err(|e| io_err("write", at, e, e.raw_os_error()))?;
        done += n;
    }
    Ok(())
}

/// Open the target again the way UDisks opens it for GNOME Disks:
/// O_DIRECT (where the target has it) and O_SYNC; through the descriptor
/// already open, never by name.
fn reopen(target: &OpenTarget, write: bool) -> Result<File, DiskError> {
    let mut flags = rustix::fs::OFlags::SYNC;
    if target.direct {
        flags |= rustix::fs::OFlags::DIRECT;
    }
    target.reopen(write, flags)
}

/// The settings GNOME Disks' benchmark takes.
pub(crate) const SETTINGS: &[Setting] = &[
    Setting::Samples,
    Setting::SampleSize,
    Setting::AccessSamples,
    Setting::Write,
];

/// The benchmark's options from the user's settings.
pub(crate) fn plan(s: &ProfileSettings) -> Result<GnomeOptions, DiskError> {
    let mut o = GnomeOptions::defaults(s.quick);
    o.samples = s.samples.unwrap_or(o.samples);
    o.sample_size = s.sample_size.unwrap_or(o.sample_size);
    o.access_samples = s.access_samples.unwrap_or(o.access_samples);
    if o.sample_size.get() == 0 || !o.sample_size.get().is_multiple_of(PAGE) {
        return Err(DiskError::Invalid(
            "--sample-size must be a whole number of 4 KiB pages: try --sample-size 10MiB".into(),
        ));
    }
    if o.samples == 0 && o.access_samples == 0 {
        return Err(DiskError::Invalid(
            "--samples and --access-samples are both 0: nothing to measure".into(),
        ));
    }
    o.write = s.write;
    o.keep_cache = s.keep_cache;
    Ok(o)
}

/// Run the benchmark on `target`.
pub(crate) fn run(
    opts: &GnomeOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let size = target.info.size.get();
    let ss = opts.sample_size.get();
    if ss == 0 || !ss.is_multiple_of(PAGE) || ss > usize::MAX as u64 {
        return Err(DiskError::Invalid(format!(
            "--sample-size {} is not a whole number of 4 KiB pages: try --sample-size 10MiB",
            opts.sample_size
        )));
    }
    if size < ss {
        return Err(DiskError::Invalid(format!(
            "the target ({}) is smaller than one sample ({}): lower --sample-size",
            target.info.size, opts.sample_size
        )));
    }
    if opts.samples == 0 && opts.access_samples == 0 {
        return Err(DiskError::Invalid(
            "--samples and --access-samples are both 0: nothing to measure".into(),
        ));
    }
    if opts.write && !target.writable {
        return Err(DiskError::Refused(format!(
            "{} was opened read-only: the write test needs a test file or --allow-write",
            target.info.path
        )));
    }
    let file = reopen(target, opts.write)?;
    let mut result = GnomeResult {
        sample_size: opts.sample_size,
        samples_requested: opts.samples,
        access_samples_requested: opts.access_samples,
        write: opts.write,
        avg_read: None,
        avg_write: None,
        avg_access: None,
        transfer: Vec::new(),
        access: Vec::new(),
    };
    let align = target.info.logical_block_size as usize;
    let mut buf = AlignedBuf::new(ss as usize, align);
    let mut page = AlignedBuf::new(PAGE as usize, align);
    let mut interrupted = false;

    // Each test starts with the target's pages dropped, as each job of the
    // other profiles does (only a target without O_DIRECT has any).
    if !opts.keep_cache {
        target.invalidate_cache();
    }
    obs.begin("transfer rate");
    let start = Instant::now();
    for n in 0..opts.samples {
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let offset = sample_offset(n, opts.samples, size, ss);
        read_at(&file, page.as_mut_slice(), offset)?;
        let t = Instant::now();
        read_at(&file, buf.as_mut_slice(), offset)?;
        let read = BytesPerSec::over(opts.sample_size, Nanos::from_duration(t.elapsed()));
        let write = if opts.write {
            read_at(&file, page.as_mut_slice(), offset)?;
            let t = Instant::now();
            write_at(&file, buf.as_slice(), offset)?;
            rustix::fs::fsync(&file).map_err(|e| io_err("fsync", offset, e, e.raw_os_error()))?;
            Some(BytesPerSec::over(
                opts.sample_size,
                Nanos::from_duration(t.elapsed()),
            ))
        } else {
            None
        };
        result.transfer.push(GnomeTransferSample {
            offset,
            position_pct: 100.0 * offset as f64 / size as f64,
            read,
            write,
        });
        obs.progress(&Progress {
            elapsed: start.elapsed(),
            total: None,
            ramping: false,
            bytes: ss * u64::from(n + 1),
            bytes_total: Some(ss * u64::from(opts.samples)),
        });
    }
    obs.end();

    if !interrupted && opts.access_samples > 0 {
        if !opts.keep_cache {
            target.invalidate_cache();
        }
        obs.begin("access time");
        let start = Instant::now();
        let mut prev: Option<u64> = None;
        let offsets = access_offsets(opts.access_samples, size);
        let total = offsets.len() as u64;
        for (i, offset) in offsets.into_iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                interrupted = true;
                break;
            }
            let t = Instant::now();
            read_at(&file, page.as_mut_slice(), offset)?;
            let time = Nanos::from_duration(t.elapsed());
            result.access.push(GnomeAccessSample {
                offset,
                time,
                distance_pct: prev.map(|p| 100.0 * p.abs_diff(offset) as f64 / size as f64),
            });
            prev = Some(offset);
            if i % 16 == 0 {
                obs.progress(&Progress {
                    elapsed: start.elapsed(),
                    total: None,
                    ramping: false,
                    bytes: PAGE * (i as u64 + 1),
                    bytes_total: Some(PAGE * total),
                });
            }
        }
        obs.end();
    }

    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let reads: Vec<f64> = result.transfer.iter().map(|s| s.read.0).collect();
    let writes: Vec<f64> = result
        .transfer
        .iter()
        .filter_map(|s| s.write.map(|w| w.0))
        .collect();
    let times: Vec<f64> = result.access.iter().map(|s| s.time.get() as f64).collect();
    result.avg_read = mean(&reads).map(BytesPerSec);
    result.avg_write = mean(&writes).map(BytesPerSec);
    result.avg_access = mean(&times).map(|t| Nanos(t.round() as u64));

    let mut warnings = shortened(opts.quick, || {
        format!(
            "{} transfer samples and {} access samples instead of {} and {}",
            opts.samples, opts.access_samples, DEFAULT_SAMPLES, DEFAULT_ACCESS_SAMPLES
        )
    });
    if !target.direct {
        warnings.push(Warning::new(
            WarningKind::BufferedIo,
            "no O_DIRECT here: GNOME Disks' figures came from the page cache, not the device",
        ));
    }
    Ok(ProfileOutcome {
        jobs: Vec::new(),
        result: ProfileResult::Gnome(result),
        warnings,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_profiles_md() {
        let d = GnomeOptions::defaults(false);
        assert_eq!(d.samples, 100);
        assert_eq!(d.sample_size, Bytes(10 << 20));
        assert_eq!(d.access_samples, 1000);
        assert_eq!(ACCESS_SEED, 42);
    }

    #[test]
    fn samples_spread_evenly_and_page_aligned() {
        let size = 1_000_000_000u64;
        let offs: Vec<u64> = (0..100)
            .map(|n| sample_offset(n, 100, size, 10 << 20))
            .collect();
        assert_eq!(offs[0], 0);
        assert_eq!(offs[1], 10_000_000 / 4096 * 4096);
        assert!(offs.iter().all(|o| o % 4096 == 0 && o + (10 << 20) <= size));
        assert!(offs.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn access_offsets_repeat_and_stay_inside() {
        let size = (256 << 20) + 100;
        let a = access_offsets(1000, size);
        assert_eq!(a, access_offsets(1000, size));
        assert_eq!(a.len(), 1000);
        assert!(a.iter().all(|o| o % 4096 == 0 && o + 4096 <= size));
        // Uniform: both halves get a fair share.
        let low = a.iter().filter(|o| **o < size / 2).count();
        assert!((400..600).contains(&low), "{low}");
    }
}
