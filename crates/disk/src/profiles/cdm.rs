//! CrystalDiskMark 8 (`cdm`, `cdm-nvme`, `cdm-peak`, `cdm-real`) and 3.0
//! (`cdm3`).
//!
//! Per row: the read test, then the write test, then the mix test when
//! asked. Each test runs one discarded preparation pass and then N measured
//! passes; CrystalDiskMark reports the maximum bandwidth over the passes and
//! the minimum mean latency, IOPS derived from the bandwidth. Tests are
//! separated by a pause (`--interval`).

use std::sync::atomic::AtomicBool;

use iomark_model::disk::{DataPattern, DiskJobSpec, EngineKind, RwMode};
use iomark_model::profile::{CdmResult, CdmTest, ProfileResult, TestDir};
use iomark_model::units::{Bytes, BytesPerSec, Iops, Nanos};
use iomark_model::{Warning, WarningKind};

use super::common::{shortened, PointSpec};
use super::settings::{ProfileSettings, Setting};
use super::{measure, pause, ProfileName, ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// Passes over which the spread counts as high, as a fraction of the maximum
/// (the text summary marks such tests in its spread column).
const HIGH_SPREAD: f64 = iomark_model::profile::CDM_HIGH_SPREAD;

/// One row of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CdmRow {
    /// Sequential (`SEQ`) or random (`RND`) offsets.
    seq: bool,
    /// Bytes per I/O.
    pub(crate) bs: u64,
    /// Queue depth per thread.
    queues: u32,
    /// Threads.
    threads: u32,
    /// CrystalDiskMark 3.0's own row name (`Seq`, `512K`, `4K`, `4K QD32`).
    name: Option<&'static str>,
}

impl CdmRow {
    const fn new(seq: bool, bs: u64, queues: u32, threads: u32) -> Self {
        CdmRow {
            seq,
            bs,
            queues,
            threads,
            name: None,
        }
    }

    /// The row's label: `SEQ1M Q8T1`, `RND4K Q32T16`, or CDM 3.0's name.
    pub(crate) fn label(&self) -> String {
        if let Some(n) = self.name {
            return n.to_string();
        }
        format!(
            "{}{} Q{}T{}",
            if self.seq { "SEQ" } else { "RND" },
            Bytes(self.bs).short_label(),
            self.queues,
            self.threads
        )
    }

    /// The access pattern of the row's read, write or mix test.
    fn rw(&self, dir: TestDir) -> RwMode {
        match (self.seq, dir) {
            (true, TestDir::Read) => RwMode::Read,
            (true, TestDir::Write) => RwMode::Write,
            (true, TestDir::Mix) => RwMode::ReadWrite,
            (false, TestDir::Read) => RwMode::RandRead,
            (false, TestDir::Write) => RwMode::RandWrite,
            (false, TestDir::Mix) => RwMode::RandRw,
        }
    }
}

/// A CrystalDiskMark profile as data.
#[derive(Debug, Clone, PartialEq)]
pub struct CdmDef {
    /// The profile.
    name: ProfileName,
    /// What the header calls it.
    title: &'static str,
    /// The rows, in order.
    pub(crate) rows: Vec<CdmRow>,
    /// Whether IOPS and latency (µs) are shown next to MB/s.
    shows_iops: bool,
    /// Measured passes per test.
    passes: u32,
    /// Length of each measured pass.
    pass_time: Nanos,
    /// Length of the discarded preparation pass (fixed 5 s in CDM 8, one
    /// pass time in CDM 3.0).
    prep_time: Nanos,
    /// Pause between tests.
    interval: Nanos,
    /// Test file size.
    pub(crate) size: Bytes,
    /// Whether queue-depth-1 rows use synchronous I/O (CDM 3.0 did).
    sync_qd1: bool,
}

const K: u64 = 1024;
const M: u64 = 1024 * 1024;

/// The definition of a CrystalDiskMark profile; `None` for other profiles.
fn definition(name: ProfileName) -> Option<CdmDef> {
    // The titles are the model's, so that the text can head a stored result.
    let title = iomark_model::profile::cdm_title(name.as_str())?;
    let cdm8 = |title, rows: Vec<CdmRow>, shows_iops| CdmDef {
        name,
        title,
        rows,
        shows_iops,
        passes: 5,
        pass_time: Nanos::from_secs(5),
        prep_time: Nanos::from_secs(5),
        interval: Nanos::from_secs(5),
        size: Bytes(Bytes::GIB),
        sync_qd1: false,
    };
    let def = match name {
        ProfileName::Cdm => cdm8(
            title,
            vec![
                CdmRow::new(true, M, 8, 1),
                CdmRow::new(true, M, 1, 1),
                CdmRow::new(false, 4 * K, 32, 1),
                CdmRow::new(false, 4 * K, 1, 1),
            ],
            false,
        ),
        ProfileName::CdmNvme => cdm8(
            title,
            vec![
                CdmRow::new(true, M, 8, 1),
                CdmRow::new(true, 128 * K, 32, 1),
                CdmRow::new(false, 4 * K, 32, 16),
                CdmRow::new(false, 4 * K, 1, 1),
            ],
            false,
        ),
        ProfileName::CdmPeak => cdm8(
            title,
            vec![CdmRow::new(true, M, 8, 1), CdmRow::new(false, 4 * K, 32, 1)],
            true,
        ),
        ProfileName::CdmReal => cdm8(
            title,
            vec![CdmRow::new(true, M, 1, 1), CdmRow::new(false, 4 * K, 1, 1)],
            true,
        ),
        ProfileName::Cdm3 => CdmDef {
            name,
            title,
            rows: vec![
                CdmRow {
                    name: Some("Seq"),
                    ..CdmRow::new(true, M, 1, 1)
                },
                CdmRow {
                    name: Some("512K"),
                    ..CdmRow::new(false, 512 * K, 1, 1)
                },
                CdmRow {
                    name: Some("4K"),
                    ..CdmRow::new(false, 4 * K, 1, 1)
                },
                CdmRow {
                    name: Some("4K QD32"),
                    ..CdmRow::new(false, 4 * K, 32, 1)
                },
            ],
            shows_iops: true,
            passes: 5,
            pass_time: Nanos::from_secs(6),
            prep_time: Nanos::from_secs(6),
            interval: Nanos::from_secs(5),
            size: Bytes(1_000_000_000),
            sync_qd1: true,
        },
        _ => return None,
    };
    Some(def)
}

/// `--quick`: passes, pass time and interval for a first look.
const QUICK_PASSES: u32 = 2;
/// `--quick` pass time and preparation pass.
const QUICK_PASS_TIME: Nanos = Nanos::from_secs(1);
/// `--quick` interval.
const QUICK_INTERVAL: Nanos = Nanos(0);

/// How to run a CrystalDiskMark profile.
#[derive(Debug, Clone, PartialEq)]
pub struct CdmOptions {
    /// Measured passes per test.
    pub(crate) passes: u32,
    /// Length of each measured pass.
    pub(crate) pass_time: Nanos,
    /// Length of the discarded preparation pass.
    pub(crate) prep_time: Nanos,
    /// Pause between tests.
    pub(crate) interval: Nanos,
    /// Run the mix test with this read share in percent.
    pub(crate) mix: Option<u8>,
    /// Engine for every row instead of the profile's.
    engine: Option<EngineKind>,
    /// Data written.
    data: DataPattern,
    /// Whether `--quick` chose the shortened settings.
    quick: bool,
    /// Seed of the first pass; later passes add their index.
    seed: u64,
    /// Leave the page cache as the previous pass left it.
    keep_cache: bool,
}

impl CdmOptions {
    /// The profile's defaults, or the `--quick` ones.
    fn defaults(def: &CdmDef, quick: bool) -> Self {
        CdmOptions {
            passes: if quick { QUICK_PASSES } else { def.passes },
            pass_time: if quick {
                QUICK_PASS_TIME
            } else {
                def.pass_time
            },
            prep_time: if quick {
                QUICK_PASS_TIME
            } else {
                def.prep_time
            },
            interval: if quick { QUICK_INTERVAL } else { def.interval },
            mix: None,
            engine: None,
            data: DataPattern::Random,
            quick,
            seed: 1,
            keep_cache: false,
        }
    }
}

/// The settings the CrystalDiskMark profiles take.
pub(crate) const SETTINGS: &[Setting] = &[
    Setting::Passes,
    Setting::PassTime,
    Setting::Interval,
    Setting::Mix,
    Setting::Engine,
];

/// The definition and options of CrystalDiskMark profile `name`.
pub(crate) fn plan(
    name: ProfileName,
    s: &ProfileSettings,
) -> Result<(CdmDef, CdmOptions), DiskError> {
    let invalid = |m: &str| Err(DiskError::Invalid(m.into()));
    let Some(def) = definition(name) else {
        return Err(DiskError::Invalid(format!(
            "{name} is not a CrystalDiskMark profile"
        )));
    };
    let mut o = CdmOptions::defaults(&def, s.quick);
    if let Some(p) = s.passes {
        if p == 0 {
            return invalid("--passes must be at least 1");
        }
        o.passes = p;
    }
    if let Some(t) = s.pass_time {
        if t == Nanos(0) {
            return invalid("--pass-time must be longer than 0: try --pass-time 5s");
        }
        // CDM 3.0's preparation pass is one pass long.
        if !s.quick && def.prep_time == def.pass_time {
            o.prep_time = t;
        }
        o.pass_time = t;
    }
    if let Some(t) = s.interval {
        o.interval = t;
    }
    if s.mix.is_some_and(|m| m > 100) {
        return invalid("--mix is a read percentage: give 0 to 100");
    }
    o.mix = s.mix;
    o.engine = s.engine;
    o.data = s.data;
    o.seed = s.seed;
    o.keep_cache = s.keep_cache;
    Ok((def, o))
}

/// The job of one pass of one test.
fn pass_spec(
    def: &CdmDef,
    row: &CdmRow,
    dir: TestDir,
    opts: &CdmOptions,
    target: &OpenTarget,
    pass: u32,
) -> DiskJobSpec {
    let engine = opts.engine.unwrap_or(if def.sync_qd1 && row.queues == 1 {
        EngineKind::Psync
    } else {
        EngineKind::IoUring
    });
    // Each pass has its own seed (the run's plus the pass number): its
    // own offsets and data.
    let seed = opts.seed.wrapping_add(u64::from(pass));
    let name = format!("{} {}", row.label(), dir.as_str());
    DiskJobSpec {
        iodepth: row.queues,
        numjobs: row.threads,
        rwmix_read: opts.mix.unwrap_or(70),
        ..PointSpec::one_pass(engine, opts.data, seed)
            .timed(opts.pass_time)
            .job(name, row.rw(dir), Bytes(row.bs), target)
    }
}

/// Run the profile on `target`.
pub(crate) fn run(
    def: &CdmDef,
    opts: &CdmOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    if opts.passes == 0 {
        return Err(DiskError::Invalid("--passes must be at least 1".into()));
    }
    let mut result = CdmResult {
        profile: def.name.as_str().into(),
        rows: def.rows.iter().map(CdmRow::label).collect(),
        shows_iops: def.shows_iops,
        size: target.info.size,
        data: opts.data,
        passes: opts.passes,
        pass_time: opts.pass_time,
        interval: opts.interval,
        mix_read: opts.mix,
        quick: opts.quick,
        tests: Vec::new(),
    };
    let mut jobs = Vec::new();
    let mut warnings = Vec::new();
    let mut dirs = vec![TestDir::Read, TestDir::Write];
    if opts.mix.is_some() {
        dirs.push(TestDir::Mix);
    }
    let mut interrupted = false;
    'rows: for row in &def.rows {
        for &dir in &dirs {
            let first_test = jobs.is_empty() && result.tests.is_empty();
            if !first_test && !pause(opts.interval.as_duration(), stop, obs) {
                interrupted = true;
                break 'rows;
            }
            let label = format!("{} {}", row.label(), dir.as_str());
            let mut prep = pass_spec(def, row, dir, opts, target, 0);
            prep.runtime = Some(opts.prep_time);
            if measure(
                &prep,
                target,
                opts.keep_cache,
                stop,
                obs,
                &format!("{label} prep"),
            )?
            .is_none()
            {
                interrupted = true;
                break 'rows;
            }
            let first_job = jobs.len();
            let mut passes = Vec::new();
            for pass in 1..=opts.passes {
                let spec = pass_spec(def, row, dir, opts, target, pass);
                let tag = format!("{label} {pass}/{}", opts.passes);
                match measure(&spec, target, opts.keep_cache, stop, obs, &tag)? {
                    Some(job) => passes.push(job),
                    None => {
                        interrupted = true;
                        break 'rows;
                    }
                }
            }
            let test = summarise(row, dir, &passes, first_job);
            if let Some((lo, hi)) = test.bw_spread() {
                if opts.passes > 1 && hi.0 > 0.0 && (hi.0 - lo.0) / hi.0 > HIGH_SPREAD {
                    warnings.push(Warning::new(
                        WarningKind::HighSpread,
                        format!(
                            "{label}: passes ranged {:.2} to {:.2} MB/s; the maximum is \
                             reported, but the device is not steady (raise --pass-time or \
                             --interval, or check for background load)",
                            lo.mb_per_sec(),
                            hi.mb_per_sec()
                        ),
                    ));
                }
            }
            jobs.extend(passes);
            result.tests.push(test);
            obs.finished(&jobs);
        }
    }
    warnings.extend(shortened(opts.quick, || {
        format!(
            "{} passes of {} with {} intervals instead of {} passes of {} with {}; \
             a first look, not a figure to compare with CrystalDiskMark",
            opts.passes,
            secs(opts.pass_time),
            secs(opts.interval),
            def.passes,
            secs(def.pass_time),
            secs(def.interval)
        )
    }));
    Ok(ProfileOutcome {
        jobs,
        result: ProfileResult::Cdm(result),
        warnings,
        interrupted,
    })
}

fn secs(n: Nanos) -> String {
    format!("{} s", n.as_secs_f64())
}

/// CrystalDiskMark's statistic: the maximum bandwidth over the passes, the
/// minimum mean latency, IOPS from the bandwidth and the block size.
fn summarise(
    row: &CdmRow,
    dir: TestDir,
    passes: &[iomark_model::disk::DiskJobResult],
    first_job: usize,
) -> CdmTest {
    let pass_bw: Vec<BytesPerSec> = passes.iter().map(|j| j.total_bw()).collect();
    let pass_lat_mean_ns: Vec<f64> = passes.iter().map(mean_latency).collect();
    let bw = BytesPerSec(pass_bw.iter().map(|b| b.0).fold(0.0, f64::max));
    let lat_mean_ns = pass_lat_mean_ns
        .iter()
        .cloned()
        .filter(|l| *l > 0.0)
        .fold(f64::INFINITY, f64::min);
    CdmTest {
        row: row.label(),
        dir,
        bs: Bytes(row.bs),
        queues: row.queues,
        threads: row.threads,
        pass_bw,
        pass_lat_mean_ns,
        bw,
        iops: Iops(bw.0 / row.bs as f64),
        lat_mean_ns: if lat_mean_ns.is_finite() {
            lat_mean_ns
        } else {
            0.0
        },
        first_job,
    }
}

/// Mean completion latency over both directions of a job.
fn mean_latency(job: &iomark_model::disk::DiskJobResult) -> f64 {
    let dirs = [job.read.as_ref(), job.write.as_ref()];
    let (sum, n) = dirs.iter().flatten().fold((0.0, 0u64), |(s, n), d| {
        (s + d.clat.mean_ns * d.clat.count as f64, n + d.clat.count)
    });
    if n == 0 {
        0.0
    } else {
        sum / n as f64
    }
}

#[cfg(test)]
#[path = "cdm_tests.rs"]
mod tests;
