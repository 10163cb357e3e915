//! SNIA PTS 2.0.2's round-based tests (docs/pts.md): IOPS, throughput and
//! latency. Each purges, preconditions (128 KiB sequential writes, twice
//! the range), then runs rounds of every read/write mix at every block
//! size until the tracking variable (the test's figure of its all-writes
//! cell) holds steady over a five-round window, at most 25 rounds; the
//! tables are each cell averaged over that window.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use iomark_model::disk::{DiskJobResult, DiskJobSpec, EngineKind, RwMode, TargetKind};
use iomark_model::profile::ProfileResult;
use iomark_model::pts::{
    mix_label, tracking_cell, Preconditioning, PtsCell, PtsResult, PtsRound, PtsRoundStatus,
    PtsTest, PtsWindowFigures, Purge,
};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};
use iomark_model::{Warning, WarningKind};
use iomark_stats::histogram::LatencyHistogram;
use iomark_stats::steady::{PtsRule, PtsWindow};

use super::common::{shortened, PointOptions, PointSpec};
use super::settings::{ProfileSettings, Setting};
use super::{measure, ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// The IOPS test's mixes, as read percentages, in the specification's
/// order.
const MIXES: [u8; 7] = [100, 95, 65, 50, 35, 5, 0];
/// Its block sizes, in its order.
const BLOCK_SIZES: [u64; 8] = [
    1 << 20,
    128 << 10,
    64 << 10,
    32 << 10,
    16 << 10,
    8 << 10,
    4 << 10,
    512,
];
/// The throughput test's mixes: all reads, all writes.
const TP_MIXES: [u8; 2] = [100, 0];
/// Its block size unless `--sizes` gives the other one (128 KiB).
const TP_BLOCK_SIZE: u64 = 1 << 20;
/// The latency test's mixes.
const LAT_MIXES: [u8; 3] = [100, 65, 0];
/// Its block sizes.
const LAT_BLOCK_SIZES: [u64; 3] = [8 << 10, 4 << 10, 512];
/// The preconditioning's block size.
pub(crate) const PRECONDITION_BS: u64 = 128 << 10;
/// The IOPS test's threads, each with [`DEFAULT_DEPTH`] I/Os in flight
/// (the specification's enterprise recommendation, T4Q32).
const THREADS: u32 = 4;
/// I/Os in flight per thread unless `--qd` says (IOPS, throughput).
const DEFAULT_DEPTH: u32 = 32;
/// Measured time of a cell.
const DEFAULT_CELL_TIME: Nanos = Nanos::from_secs(60);
/// `--quick`'s.
const QUICK_CELL_TIME: Nanos = Nanos::from_secs(5);
/// The percentile the latency test reports beside the mean and maximum.
const FIVE_NINES: f64 = 99.999;

/// How to run a test.
#[derive(Debug, Clone, PartialEq)]
pub struct PtsOptions {
    /// Which test.
    test: PtsTest,
    /// Read percentages, in order.
    pub(crate) mixes: Vec<u8>,
    /// Block sizes, in order.
    pub(crate) block_sizes: Vec<Bytes>,
    /// Threads, each its own stream of I/Os.
    threads: u32,
    /// I/Os in flight per thread.
    depth: u32,
    /// Rounds at most.
    pub(crate) max_rounds: u32,
    /// Bytes of preconditioning; `None`: twice the range.
    pub(crate) precondition: Option<Bytes>,
    /// The engine.
    engine: EngineKind,
    /// Cell time (`runtime`), ramp, data, seed, cache.
    pub(crate) common: PointOptions,
}

/// The settings the IOPS and throughput tests take.
pub(crate) const SETTINGS: &[Setting] = &[
    Setting::Passes,
    Setting::Runtime,
    Setting::Ramp,
    Setting::Qd,
    Setting::Engine,
    Setting::Sizes,
    Setting::Mixes,
    Setting::Precondition,
];

/// The settings the latency test takes: its depth is the
/// specification's, one.
pub(crate) const LAT_SETTINGS: &[Setting] = &[
    Setting::Passes,
    Setting::Runtime,
    Setting::Ramp,
    Setting::Engine,
    Setting::Sizes,
    Setting::Mixes,
    Setting::Precondition,
];

/// Test `test`'s options from the user's settings.
pub(crate) fn plan(test: PtsTest, s: &ProfileSettings) -> Result<PtsOptions, DiskError> {
    let invalid = |m: String| Err(DiskError::Invalid(m));
    let name = test.profile();
    let cell = if s.quick {
        QUICK_CELL_TIME
    } else {
        DEFAULT_CELL_TIME
    };
    let (mixes, sizes): (&[u8], Vec<u64>) = match test {
        PtsTest::Iops => (&MIXES, BLOCK_SIZES.to_vec()),
        PtsTest::Throughput => (&TP_MIXES, vec![TP_BLOCK_SIZE]),
        PtsTest::Latency => (&LAT_MIXES, LAT_BLOCK_SIZES.to_vec()),
    };
    let mixes = s.mixes.as_ref().map_or(mixes.to_vec(), |m| m.0.clone());
    let block_sizes = s
        .sizes
        .as_ref()
        .map_or_else(|| sizes.into_iter().map(Bytes).collect(), |l| l.0.clone());
    if test == PtsTest::Throughput {
        if block_sizes.len() != 1 {
            return invalid(format!(
                "{name} runs one block size a test, as the specification does: give --sizes \
                 1m or --sizes 128k, and run the other as a second test"
            ));
        }
        if let Some(m) = mixes.iter().find(|m| !TP_MIXES.contains(m)) {
            return invalid(format!(
                "--mixes {m}: {name} reads or writes sequentially, 100 or 0"
            ));
        }
    }
    let (track_mix, track_bs) = tracking_cell(test, &block_sizes);
    if !mixes.contains(&track_mix) || !block_sizes.contains(&track_bs) {
        return invalid(format!(
            "{name} tracks {track_bs} writes: keep 0 in --mixes and {} in --sizes",
            track_bs.short_label()
        ));
    }
    let (threads, depth) = match (test, s.qd.as_ref().map(|q| q.0.as_slice())) {
        (PtsTest::Latency, _) => (1, 1),
        (PtsTest::Iops, None) => (THREADS, DEFAULT_DEPTH),
        (PtsTest::Throughput, None) => (1, DEFAULT_DEPTH),
        (PtsTest::Iops, Some([d])) => (THREADS, *d),
        (PtsTest::Throughput, Some([d])) => (1, *d),
        (_, Some(_)) => return invalid(format!("{name} runs one depth: give --qd a single value")),
    };
    let max_rounds = s.passes.unwrap_or(PtsRule::default().max_rounds as u32);
    let window = PtsRule::default().window as u32;
    if max_rounds < window {
        return invalid(format!(
            "--passes {max_rounds}: {name} needs at least {window} rounds, its steady-state window"
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
    Ok(PtsOptions {
        test,
        mixes,
        block_sizes,
        threads,
        depth,
        max_rounds,
        precondition: s.precondition,
        engine,
        common: PointOptions::defaults(s.quick, Nanos(0), cell).given(s),
    })
}

/// The label a cell's job runs under (its name).
pub(crate) fn cell_label(round: u32, read_pct: u8, bs: Bytes) -> String {
    format!("round {round} {} {}", bs.short_label(), mix_label(read_pct))
}

/// The job of one cell: random I/O, or sequential in the throughput test.
fn cell_spec(o: &PtsOptions, read_pct: u8, bs: Bytes, round: u32, t: &OpenTarget) -> DiskJobSpec {
    let sequential = o.test == PtsTest::Throughput;
    let rw = match (read_pct, sequential) {
        (100, false) => RwMode::RandRead,
        (0, false) => RwMode::RandWrite,
        (_, false) => RwMode::RandRw,
        (100, true) => RwMode::Read,
        (0, true) => RwMode::Write,
        (_, true) => RwMode::ReadWrite,
    };
    let name = cell_label(round, read_pct, bs);
    DiskJobSpec {
        iodepth: o.depth,
        numjobs: o.threads,
        rwmix_read: read_pct,
        ..o.common.spec(o.engine).job(name, rw, bs, t)
    }
}

/// Every completion latency of a job, both directions.
fn latencies(job: &DiskJobResult) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for d in [job.read.as_ref(), job.write.as_ref()]
        .into_iter()
        .flatten()
    {
        h.merge(&LatencyHistogram::from_summary(&d.clat));
    }
    h
}

fn cell_of(job: &DiskJobResult, read_pct: u8, bs: Bytes, index: usize) -> PtsCell {
    let dirs = [job.read.as_ref(), job.write.as_ref()];
    let lat = latencies(job);
    PtsCell {
        read_pct,
        bs,
        iops: dirs.iter().flatten().map(|d| d.iops.0).sum(),
        bw: job.total_bw(),
        lat_mean_ns: lat.mean(),
        lat_p99999_ns: lat.value_at_percentile(FIVE_NINES) as f64,
        lat_max_ns: lat.max() as f64,
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
    o: &PtsOptions,
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

/// Each cell averaged over `rounds` (the means, IOPS and bandwidth), its
/// five nines and maximum over every I/O of them (`latencies`, the
/// rounds' histograms cell by cell).
fn table(o: &PtsOptions, rounds: &[PtsRound], latencies: &[Vec<LatencyHistogram>]) -> Vec<PtsCell> {
    let mut out = Vec::new();
    for &m in &o.mixes {
        for &bs in &o.block_sizes {
            let found = |r: &PtsRound| r.cells.iter().position(|c| c.read_pct == m && c.bs == bs);
            let cells: Vec<&PtsCell> = rounds
                .iter()
                .filter_map(|r| found(r).map(|i| &r.cells[i]))
                .collect();
            if cells.is_empty() {
                continue;
            }
            let mut all = LatencyHistogram::new();
            for (r, hists) in rounds.iter().zip(latencies) {
                if let Some(h) = found(r).and_then(|i| hists.get(i)) {
                    all.merge(h);
                }
            }
            let n = cells.len() as f64;
            let mean = |f: fn(&PtsCell) -> f64| cells.iter().map(|c| f(c)).sum::<f64>() / n;
            out.push(PtsCell {
                read_pct: m,
                bs,
                iops: mean(|c| c.iops),
                bw: BytesPerSec(mean(|c| c.bw.0)),
                lat_mean_ns: mean(|c| c.lat_mean_ns),
                lat_p99999_ns: all.value_at_percentile(FIVE_NINES) as f64,
                lat_max_ns: all.max() as f64,
                job: None,
            });
        }
    }
    out
}

/// Run the test on `target`.
pub(crate) fn run(
    o: &PtsOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let name = o.test.profile();
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
    let mut result = PtsResult {
        test: o.test,
        mixes: o.mixes.clone(),
        block_sizes: o.block_sizes.clone(),
        threads: o.threads,
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
    let tracked = result.tracking_cell();
    let mut jobs = Vec::new();
    let mut interrupted = false;
    match precondition(o, target, range, stop, obs)? {
        Some(p) => result.preconditioning = p,
        None => interrupted = true,
    }
    let mut tracking = Vec::new();
    // The last window's rounds' latencies, cell by cell: the table's five
    // nines and maximum are over every I/O of the rounds it averages.
    let mut latest: VecDeque<Vec<LatencyHistogram>> = VecDeque::new();
    // The round a stop cut short, and how many of its cells had run.
    let mut cut_short = None;
    let cells_a_round = o.mixes.len() * o.block_sizes.len();
    'rounds: for round in 1..=o.max_rounds {
        if interrupted {
            break;
        }
        let mut cells = Vec::new();
        let mut hists = Vec::new();
        for &m in &o.mixes {
            for &bs in &o.block_sizes {
                let spec = cell_spec(o, m, bs, round, target);
                let Some(job) = measure(&spec, target, o.common.keep_cache, stop, obs, &spec.name)?
                else {
                    interrupted = true;
                    cut_short = Some((round, cells.len()));
                    break 'rounds;
                };
                cells.push(cell_of(&job, m, bs, jobs.len()));
                hists.push(latencies(&job));
                jobs.push(job);
                // The round's last test is checkpointed with the round's
                // verdict, below.
                if cells.len() < cells_a_round {
                    obs.finished(&jobs);
                }
            }
        }
        let track = cells
            .iter()
            .find(|c| (c.read_pct, c.bs) == tracked)
            .map_or(0.0, |c| o.test.tracked(c));
        tracking.push(track);
        result.rounds.push(PtsRound {
            round,
            cells,
            tracking: track,
        });
        latest.push_back(hists);
        if latest.len() > rule.window {
            latest.pop_front();
        }
        let window = rule.window_at(&tracking, round as usize);
        let figures = window.as_ref().map(|w| window_figures(w, &rule));
        obs.round(&PtsRoundStatus {
            test: o.test,
            round,
            max_rounds: o.max_rounds,
            read_pct: tracked.0,
            bs: tracked.1,
            tracking: track,
            window: figures,
            window_rounds: rule.window as u32,
            data_limit: rule.data_excursion,
            slope_limit: rule.slope_excursion,
        });
        obs.finished(&jobs);
        if let Some(figures) = figures {
            result.window = Some(figures);
            if figures.steady {
                break;
            }
        }
    }
    // The window is the last rounds run (the test ends at a steady one),
    // or, short of a window, every round.
    let averaged = &result.rounds[result.rounds.len() - latest.len()..];
    result.table = table(o, averaged, latest.make_contiguous());
    if !on_device {
        warnings.push(Warning::new(
            WarningKind::NotSteady,
            format!(
                "{name} ran on a file: the procedure's plumbing, not a PTS result (name a block \
                 device with --allow-write for one)"
            ),
        ));
    }
    if !result.steady() && !interrupted {
        let unit = o.test.unit();
        warnings.push(Warning::new(
            WarningKind::NotSteady,
            format!(
                "{name}: steady state not reached in {} rounds (the last window's data \
                 excursion {}, slope excursion {} of its average {:.1} {unit}): the table is not \
                 a steady-state result; raise --passes or precondition longer",
                result.rounds.len(),
                result
                    .window
                    .map_or("-".into(), |w| pct(w.data_excursion, w.average)),
                result
                    .window
                    .map_or("-".into(), |w| pct(w.slope_excursion, w.average)),
                result.window.map_or(0.0, |w| o.test.shown(w.average)),
            ),
        ));
    }
    if let Some((round, ran)) = cut_short {
        let kept = match round {
            1 => "no round ended".to_string(),
            2 => "round 1 is kept".to_string(),
            r => format!("rounds 1-{} are kept", r - 1),
        };
        warnings.push(Warning::new(
            WarningKind::NotSteady,
            format!(
                "{name}: stopped in round {round} of at most {}, {ran} of its {cells_a_round} cells run: \
                 {kept}, not a steady-state result",
                o.max_rounds
            ),
        ));
    }
    if let Purge::Skipped { why } = &result.purge {
        if on_device {
            warnings.push(Warning::new(
                WarningKind::NotSteady,
                format!("{name}: the device was not purged first: {why}"),
            ));
        }
    }
    Ok(ProfileOutcome {
        jobs,
        result: ProfileResult::Pts(result),
        warnings,
        interrupted,
    })
}

fn pct(part: f64, of: f64) -> String {
    format!("{:.1}%", 100.0 * part / of.abs().max(f64::MIN_POSITIVE))
}
