//! SNIA PTS 2.0.2's IOPS test (docs/pts.md): purge, workload-independent
//! preconditioning (128 KiB sequential writes, twice the range), then
//! rounds of every read/write mix at every block size until the tracking
//! variable (4 KiB random writes' IOPS) holds steady over a five-round
//! window, at most 25 rounds; the IOPS table is each cell averaged over
//! that window.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use iomark_model::disk::{DiskJobResult, DiskJobSpec, EngineKind, RwMode, TargetKind};
use iomark_model::profile::ProfileResult;
use iomark_model::pts::{
    mix_label, Preconditioning, PtsCell, PtsIopsResult, PtsRound, PtsWindowFigures, Purge,
};
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{Warning, WarningKind};
use iomark_stats::steady::{PtsRule, PtsWindow};

use super::common::{shortened, PointOptions, PointSpec};
use super::settings::{ProfileSettings, Setting};
use super::{measure, ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// The specification's mixes, as read percentages, in its order.
pub const MIXES: [u8; 7] = [100, 95, 65, 50, 35, 5, 0];
/// Its block sizes, in its order.
pub const BLOCK_SIZES: [u64; 8] = [
    1 << 20,
    128 << 10,
    64 << 10,
    32 << 10,
    16 << 10,
    8 << 10,
    4 << 10,
    512,
];
/// The tracking variable's cell: 4 KiB, all writes.
pub const TRACKING: (u8, u64) = (0, 4 << 10);
/// The preconditioning's block size.
pub const PRECONDITION_BS: u64 = 128 << 10;
/// Threads; each with [`DEFAULT_DEPTH`] I/Os in flight (the
/// specification's enterprise recommendation, T4Q32).
pub const THREADS: u32 = 4;
/// I/Os in flight per thread unless `--qd` says.
pub const DEFAULT_DEPTH: u32 = 32;
/// Measured time of a cell.
pub const DEFAULT_CELL_TIME: Nanos = Nanos::from_secs(60);
/// `--quick`'s.
pub const QUICK_CELL_TIME: Nanos = Nanos::from_secs(5);

/// How to run the test.
#[derive(Debug, Clone, PartialEq)]
pub struct PtsIopsOptions {
    /// Read percentages, in order.
    pub mixes: Vec<u8>,
    /// Block sizes, in order.
    pub block_sizes: Vec<Bytes>,
    /// I/Os in flight per thread.
    pub depth: u32,
    /// Rounds at most.
    pub max_rounds: u32,
    /// Bytes of preconditioning; `None`: twice the range.
    pub precondition: Option<Bytes>,
    /// The engine.
    pub engine: EngineKind,
    /// Cell time (`runtime`), ramp, data, seed, cache.
    pub common: PointOptions,
}

/// The settings the test takes.
pub const SETTINGS: &[Setting] = &[
    Setting::Passes,
    Setting::Runtime,
    Setting::Ramp,
    Setting::Qd,
    Setting::Engine,
    Setting::Sizes,
    Setting::Mixes,
    Setting::Precondition,
];

/// The test's options from the user's settings.
pub fn plan(s: &ProfileSettings) -> Result<PtsIopsOptions, DiskError> {
    let invalid = |m: String| Err(DiskError::Invalid(m));
    let cell = if s.quick {
        QUICK_CELL_TIME
    } else {
        DEFAULT_CELL_TIME
    };
    let mixes = s.mixes.as_ref().map_or(MIXES.to_vec(), |m| m.0.clone());
    let block_sizes = s
        .sizes
        .as_ref()
        .map_or_else(|| BLOCK_SIZES.map(Bytes).to_vec(), |l| l.0.clone());
    if !mixes.contains(&TRACKING.0) || !block_sizes.contains(&Bytes(TRACKING.1)) {
        return invalid(
            "pts-iops tracks 4 KiB random writes: keep 0 in --mixes and 4k in --sizes".into(),
        );
    }
    let depth = match s.qd.as_ref().map(|q| q.0.as_slice()) {
        None => DEFAULT_DEPTH,
        Some([d]) => *d,
        Some(_) => return invalid("pts-iops runs one depth: give --qd a single value".into()),
    };
    let max_rounds = s.passes.unwrap_or(PtsRule::default().max_rounds as u32);
    let window = PtsRule::default().window as u32;
    if max_rounds < window {
        return invalid(format!(
            "--passes {max_rounds}: pts-iops needs at least {window} rounds, its steady-state window"
        ));
    }
    let engine = match s.engine {
        Some(e) => e,
        None => {
            crate::engine::io_uring_available()
                .map_err(|e| DiskError::Invalid(format!("{e}: use --engine psync")))?;
            EngineKind::IoUring
        }
    };
    Ok(PtsIopsOptions {
        mixes,
        block_sizes,
        depth,
        max_rounds,
        precondition: s.precondition,
        engine,
        common: PointOptions::defaults(s.quick, Nanos(0), cell).given(s),
    })
}

/// The label a cell's job runs under (its name).
pub fn cell_label(round: u32, read_pct: u8, bs: Bytes) -> String {
    format!("round {round} {} {}", bs.short_label(), mix_label(read_pct))
}

/// The job of one cell.
fn cell_spec(
    o: &PtsIopsOptions,
    read_pct: u8,
    bs: Bytes,
    round: u32,
    t: &OpenTarget,
) -> DiskJobSpec {
    let rw = match read_pct {
        100 => RwMode::RandRead,
        0 => RwMode::RandWrite,
        _ => RwMode::RandRw,
    };
    let name = cell_label(round, read_pct, bs);
    DiskJobSpec {
        iodepth: o.depth,
        numjobs: THREADS,
        rwmix_read: read_pct,
        ..o.common.spec(o.engine).job(name, rw, bs, t)
    }
}

fn cell_of(job: &DiskJobResult, read_pct: u8, bs: Bytes, index: usize) -> PtsCell {
    let dirs = [job.read.as_ref(), job.write.as_ref()];
    let ios: u64 = dirs.iter().flatten().map(|d| d.ios).sum();
    let lat_sum: f64 = dirs
        .iter()
        .flatten()
        .map(|d| d.clat.mean_ns * d.ios as f64)
        .sum();
    PtsCell {
        read_pct,
        bs,
        iops: dirs.iter().flatten().map(|d| d.iops.0).sum(),
        bw: job.total_bw(),
        lat_mean_ns: if ios > 0 { lat_sum / ios as f64 } else { 0.0 },
        job: Some(index),
    }
}

/// The first step: discard the range on a block device.
pub(super) fn purge(target: &OpenTarget, range: Bytes) -> Purge {
    if target.info.kind != TargetKind::BlockDevice {
        return Purge::Skipped {
            why: "a file has no blocks of its own to purge".into(),
        };
    }
    match target.discard(range.get()) {
        Ok(secure) => Purge::Discarded { secure },
        Err(e) => Purge::Skipped {
            why: format!("the device refused a discard ({e})"),
        },
    }
}

/// The second: `asked` bytes of 128 KiB sequential writes, pass by pass
/// over the range (the last pass as far as is left). None when stopped.
fn precondition(
    o: &PtsIopsOptions,
    target: &OpenTarget,
    range: Bytes,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<Option<Preconditioning>, DiskError> {
    let asked = o
        .precondition
        .unwrap_or(Bytes(range.get().saturating_mul(2)));
    let start = Instant::now();
    let mut written = 0u64;
    while written < asked.get() {
        let left = (asked.get() - written).min(range.get());
        let spec = DiskJobSpec {
            iodepth: o.depth,
            size: Bytes(left),
            ..PointSpec::one_pass(o.engine, o.common.data, o.common.seed).job(
                "preconditioning".into(),
                RwMode::Write,
                Bytes(PRECONDITION_BS),
                target,
            )
        };
        let Some(job) = measure(&spec, target, true, stop, obs, "preconditioning")? else {
            return Ok(None);
        };
        let done = job.write.as_ref().map_or(0, |d| d.io_bytes.get());
        if done == 0 {
            break;
        }
        written += done;
    }
    Ok(Some(Preconditioning {
        asked,
        written: Bytes(written),
        took: Nanos::from_duration(start.elapsed()),
    }))
}

fn window_figures(w: &PtsWindow, rule: &PtsRule) -> PtsWindowFigures {
    PtsWindowFigures {
        first_round: (w.last_round + 1 - rule.window) as u32,
        last_round: w.last_round as u32,
        average: w.average,
        data_excursion: w.data_excursion,
        slope: w.slope,
        intercept: w.intercept,
        slope_excursion: w.slope_excursion,
        steady: w.steady(),
    }
}

/// Each cell averaged over `rounds`.
fn table(o: &PtsIopsOptions, rounds: &[PtsRound]) -> Vec<PtsCell> {
    let mut out = Vec::new();
    for &m in &o.mixes {
        for &bs in &o.block_sizes {
            let cells: Vec<&PtsCell> = rounds
                .iter()
                .filter_map(|r| r.cells.iter().find(|c| c.read_pct == m && c.bs == bs))
                .collect();
            if cells.is_empty() {
                continue;
            }
            let n = cells.len() as f64;
            let mean = |f: fn(&PtsCell) -> f64| cells.iter().map(|c| f(c)).sum::<f64>() / n;
            out.push(PtsCell {
                read_pct: m,
                bs,
                iops: mean(|c| c.iops),
                bw: iomark_model::units::BytesPerSec(mean(|c| c.bw.0)),
                lat_mean_ns: mean(|c| c.lat_mean_ns),
                job: None,
            });
        }
    }
    out
}

/// Run the test on `target`.
pub fn run(
    o: &PtsIopsOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let mut warnings = shortened(o.common.quick, || {
        format!(
            "{} a cell instead of {}",
            o.common.runtime, DEFAULT_CELL_TIME
        )
    });
    let range = target.info.size;
    let on_device = target.info.kind == TargetKind::BlockDevice;
    let rule = PtsRule {
        max_rounds: o.max_rounds as usize,
        ..PtsRule::default()
    };
    let purge = purge(target, range);
    let mut result = PtsIopsResult {
        mixes: o.mixes.clone(),
        block_sizes: o.block_sizes.clone(),
        threads: THREADS,
        depth: o.depth,
        cell_time: o.common.runtime,
        max_rounds: o.max_rounds,
        range,
        on_device,
        purge,
        preconditioning: Preconditioning {
            asked: Bytes(0),
            written: Bytes(0),
            took: Nanos(0),
        },
        rounds: Vec::new(),
        window: None,
        table: Vec::new(),
    };
    let mut jobs = Vec::new();
    let mut interrupted = false;
    match precondition(o, target, range, stop, obs)? {
        Some(p) => result.preconditioning = p,
        None => interrupted = true,
    }
    let mut tracking = Vec::new();
    'rounds: for round in 1..=o.max_rounds {
        if interrupted {
            break;
        }
        let mut cells = Vec::new();
        for &m in &o.mixes {
            for &bs in &o.block_sizes {
                let spec = cell_spec(o, m, bs, round, target);
                let Some(job) = measure(&spec, target, o.common.keep_cache, stop, obs, &spec.name)?
                else {
                    interrupted = true;
                    break 'rounds;
                };
                cells.push(cell_of(&job, m, bs, jobs.len()));
                jobs.push(job);
                obs.finished(&jobs);
            }
        }
        let track = cells
            .iter()
            .find(|c| (c.read_pct, c.bs.get()) == TRACKING)
            .map_or(0.0, |c| c.iops);
        tracking.push(track);
        result.rounds.push(PtsRound {
            round,
            cells,
            tracking: track,
        });
        if let Some(w) = rule.window_at(&tracking, round as usize) {
            result.window = Some(window_figures(&w, &rule));
            if w.steady() {
                break;
            }
        }
    }
    let averaged = match result.window {
        Some(w) => &result.rounds[(w.first_round - 1) as usize..w.last_round as usize],
        None => &result.rounds[..],
    };
    result.table = table(o, averaged);
    if !on_device {
        warnings.push(Warning::new(
            WarningKind::NotSteady,
            "pts-iops ran on a file: the procedure's plumbing, not a PTS result (name a block \
             device with --allow-write for one)",
        ));
    }
    if !result.steady() && !interrupted {
        warnings.push(Warning::new(
            WarningKind::NotSteady,
            format!(
                "pts-iops: steady state not reached in {} rounds (the last window's data \
                 excursion {}, slope excursion {} of its average {:.0} IOPS): the table is not a \
                 steady-state result; raise --passes or precondition longer",
                result.rounds.len(),
                result
                    .window
                    .map_or("-".into(), |w| pct(w.data_excursion, w.average)),
                result
                    .window
                    .map_or("-".into(), |w| pct(w.slope_excursion, w.average)),
                result.window.map_or(0.0, |w| w.average),
            ),
        ));
    }
    if let Purge::Skipped { why } = &result.purge {
        if on_device {
            warnings.push(Warning::new(
                WarningKind::NotSteady,
                format!("pts-iops: the device was not purged first: {why}"),
            ));
        }
    }
    Ok(ProfileOutcome {
        jobs,
        result: ProfileResult::PtsIops(result),
        warnings,
        interrupted,
    })
}

fn pct(part: f64, of: f64) -> String {
    format!("{:.1}%", 100.0 * part / of.abs().max(f64::MIN_POSITIVE))
}
