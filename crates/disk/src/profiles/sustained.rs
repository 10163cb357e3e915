//! The sustained-write test: where a drive's write cache runs out.
//!
//! A QLC SSD or a USB stick writes into a fast cache (SLC, DRAM) until it is
//! full and then at the speed of its slow medium; CrystalDiskMark's 1 GiB
//! never sees the second speed. This profile writes sequentially (1 MiB
//! blocks, queue depth 8, the runner's engine) from the start of the region
//! to its end, or with `--until-steady` until the rate has fallen and then
//! held steady for a while, and records bytes written over time from the
//! runner's progress reports (ten a second). The cliff is found in that
//! series by [`iomark_stats::cliff::find_cliff`]: the bytes written before
//! the rate fell (the cache size), the rate before and the rate after.
//!
//! `--recover TIME` idles that long after the first pass and writes again
//! from the start of the region, to see how much of the cache the drive
//! freed while idle: the bytes the second pass wrote at the fast rate.
//!
//! A region that ends before any drop gives no cache size, only "no cliff
//! in N": the rate it held and the bytes it held it for.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use iomark_model::disk::{DataPattern, DiskJobResult, DiskJobSpec, EngineKind, RwMode};
use iomark_model::profile::ProfileResult;
use iomark_model::pts::Purge;
use iomark_model::sustained::{
    Cliff, Hir, HirBurst, HirState, PassEnd, Recovery, SummedSeries, SustainedPass,
    SustainedResult, WrittenAt, Wsat,
};
use iomark_model::units::{Bytes, BytesPerSec, Nanos};
use iomark_model::{Warning, WarningKind};
use iomark_stats::cliff::{find_cliff, rate_between, steady, CliffParams};

use super::common::PointSpec;
use super::settings::{ProfileSettings, Setting};
use super::{pause, PassSeries, ProfileObserver, ProfileOutcome};
use crate::runner::{self, Observer};
use crate::target::{FreeSpaceMargin, OpenTarget};
use crate::DiskError;
use iomark_pipeline::Progress;

/// Bytes per write: large, so the rate is the medium's, not per-I/O cost.
const BLOCK: u64 = 1 << 20;
/// Writes in flight with an asynchronous engine.
const DEPTH: u32 = 8;
/// What a directory's test file leaves free without `--size`: 5% of the
/// free space, and at least 1 GiB.
pub(crate) const FREE_SPACE_MARGIN: FreeSpaceMargin = FreeSpaceMargin {
    divisor: 20,
    at_least: Bytes(Bytes::GIB),
    granule: Bytes(4096),
};
/// How long the rate after a drop must hold for `--until-steady` without
/// a value, and for the recovery pass.
const STEADY_SPAN: Nanos = Nanos::from_secs(20);
/// Steady: each fifth of the span within this share of their median.
const STEADY_TOLERANCE: f64 = 0.1;
/// How often a running pass is checked for its end.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// The series stored with the result has at most about this many points.
const STORED_POINTS: u32 = 2000;
/// and its points are at least this far apart.
const STORED_STEP: Duration = Duration::from_millis(250);

/// What a pass writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// Sequential or random writes.
    rw: RwMode,
    /// Bytes per write.
    pub(crate) bs: Bytes,
    /// Writes in flight per thread with an asynchronous engine.
    depth: u32,
    /// Threads, each writing the whole region once.
    threads: u32,
}

impl Pattern {
    /// The sustained-write test's: 1 MiB sequential writes at QD8, one
    /// thread.
    const SEQUENTIAL: Pattern = Pattern {
        rw: RwMode::Write,
        bs: Bytes(BLOCK),
        depth: DEPTH,
        threads: 1,
    };

    /// SNIA PTS's write saturation: 4 KiB random writes, four threads of
    /// `depth` (32 by default), each writing the region once: four times
    /// the capacity, as the specification's test writes.
    fn wsat(depth: u32) -> Pattern {
        Pattern {
            rw: RwMode::RandWrite,
            bs: Bytes(WSAT_BLOCK),
            depth,
            threads: WSAT_THREADS,
        }
    }
}

/// WSAT's block size.
const WSAT_BLOCK: u64 = 4 << 10;
/// WSAT's threads (the enterprise T4Q32).
const WSAT_THREADS: u32 = 4;
/// WSAT's depth per thread unless `--qd` says.
const WSAT_DEPTH: u32 = 32;

/// How to run the test.
#[derive(Debug, Clone, PartialEq)]
pub struct SustainedOptions {
    /// What a pass writes.
    pub(crate) pattern: Pattern,
    /// PTS's write-saturation test: purge first, say it is WSAT.
    pub(crate) wsat: bool,
    /// The engine.
    engine: EngineKind,
    /// Stop once the rate after a drop has been steady this long.
    until_steady: Option<Nanos>,
    /// Idle this long after the first pass, then write again.
    pub(crate) recover: Option<Nanos>,
    /// PTS's host idle recovery after the saturated pass (`--hir`).
    pub(crate) hir: Option<HirOptions>,
    /// What is written.
    data: DataPattern,
    /// Seed for the data.
    seed: u64,
}

/// PTS's host idle recovery: how many bursts each wait state has, and
/// how long each is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct HirOptions {
    /// Bursts per wait state (the specification's 360).
    pub(crate) bursts: u32,
    /// Each burst's length (the specification's 5 s).
    pub(crate) burst_time: Nanos,
}

impl HirOptions {
    /// The most bursts a wait state may have: ten times the
    /// specification's, about 150 hours of 5 s bursts in all.
    pub(crate) const MAX_BURSTS: u32 = 3600;

    /// The wait states' idle times, in bursts (PTS 2.0.2: 5, 10, 15, 25
    /// and 50 s after 5 s bursts).
    pub(crate) const IDLE_BURSTS: [u32; 5] = [1, 2, 3, 5, 10];

    /// The idle time of each wait state.
    pub(crate) fn idles(&self) -> impl Iterator<Item = Nanos> + '_ {
        Self::IDLE_BURSTS
            .iter()
            .map(|&k| Nanos(self.burst_time.0.saturating_mul(u64::from(k))))
    }

    /// The continuous writing after a wait state: as long as its bursts
    /// (the specification's 1,800 s after 360 bursts of 5 s).
    pub(crate) fn return_time(&self) -> Nanos {
        Nanos(self.burst_time.0.saturating_mul(u64::from(self.bursts)))
    }
}

/// The settings the test takes.
pub(crate) const SETTINGS: &[Setting] = &[Setting::Engine, Setting::UntilSteady, Setting::Recover];

/// The settings PTS's write-saturation test takes: also its depth.
pub(crate) const WSAT_SETTINGS: &[Setting] = &[
    Setting::Engine,
    Setting::Qd,
    Setting::UntilSteady,
    Setting::Recover,
    Setting::Hir,
    Setting::HirBurst,
];

/// `--hir N` and `--hir-burst TIME`, checked.
fn hir_options(s: &ProfileSettings) -> Result<Option<HirOptions>, DiskError> {
    let invalid = |why: String| Err(DiskError::Invalid(why));
    let Some(bursts) = s.hir else {
        return match s.hir_burst {
            None => Ok(None),
            Some(_) => invalid(
                "--hir-burst sets the length of --hir's bursts: give --hir N too, e.g. --hir 360"
                    .into(),
            ),
        };
    };
    if bursts == 0 {
        return invalid("--hir needs at least one burst per wait state: try --hir 360".into());
    }
    if bursts > HirOptions::MAX_BURSTS {
        return invalid(format!(
            "--hir {bursts} is more bursts a wait state than {} (the specification's 360 \
             take about 15 hours in all): try --hir 360",
            HirOptions::MAX_BURSTS
        ));
    }
    if s.hir_burst == Some(Nanos(0)) {
        return invalid("--hir-burst needs a length longer than 0: try --hir-burst 5s".into());
    }
    if s.recover.is_some() {
        return invalid("--hir and --recover both idle after saturation: give one of them".into());
    }
    Ok(Some(HirOptions {
        bursts,
        burst_time: s.hir_burst.unwrap_or(Nanos::from_secs(5)),
    }))
}

/// The write-saturation test's options: the sustained test's, with WSAT's
/// pattern and a purge first.
pub(crate) fn plan_wsat(s: &ProfileSettings) -> Result<SustainedOptions, DiskError> {
    let depth = match s.qd.as_ref().map(|q| q.0.as_slice()) {
        None => WSAT_DEPTH,
        Some([d]) => *d,
        Some(_) => {
            return Err(DiskError::Invalid(
                "pts-wsat runs one depth: give --qd a single value".into(),
            ))
        }
    };
    let hir = hir_options(s)?;
    Ok(SustainedOptions {
        pattern: Pattern::wsat(depth),
        wsat: true,
        hir,
        ..plan(s)?
    })
}

/// The test's options from the user's settings.
pub(crate) fn plan(s: &ProfileSettings) -> Result<SustainedOptions, DiskError> {
    let min = CliffParams::default().hold;
    if let Some(span) = s.until_steady.filter(|d| *d < min) {
        return Err(DiskError::Invalid(format!(
            "--until-steady={span} is too short to call a rate steady: give at least {min}, \
             e.g. --until-steady=20s"
        )));
    }
    if s.recover == Some(Nanos(0)) {
        return Err(DiskError::Invalid(
            "--recover needs an idle time longer than 0: try --recover 60s".into(),
        ));
    }
    Ok(SustainedOptions {
        pattern: Pattern::SEQUENTIAL,
        wsat: false,
        engine: s.engine.unwrap_or(EngineKind::IoUring),
        until_steady: s.until_steady,
        recover: s.recover,
        hir: None,
        data: s.data,
        seed: s.seed,
    })
}

/// The region the passes write on a target of `size`: whole blocks of
/// `bs`, at least one.
fn region(size: Bytes, bs: Bytes) -> Bytes {
    let (size, bs) = (size.get(), bs.get().max(1));
    Bytes((size / bs * bs).max(bs.min(size)))
}

/// The bytes a pass writes at most: each thread the region once.
pub(crate) fn pass_bytes(o: &SustainedOptions, target_size: Bytes) -> Bytes {
    let region = region(target_size, o.pattern.bs).get();
    Bytes(region.saturating_mul(u64::from(o.pattern.threads)))
}

fn spec(o: &SustainedOptions, region: Bytes, t: &OpenTarget, name: &str) -> DiskJobSpec {
    let p = o.pattern;
    DiskJobSpec {
        iodepth: p.depth,
        numjobs: p.threads,
        size: region,
        rwmix_read: 0,
        ..PointSpec::one_pass(o.engine, o.data, o.seed).job(name.into(), p.rw, p.bs, t)
    }
}

/// Watches a pass: passes progress on, records bytes written over time,
/// and raises the pass's own stop flag at Ctrl-C or when `ends` says the
/// pass has shown what it had to.
struct Watch<'a> {
    inner: &'a mut dyn ProfileObserver,
    user_stop: &'a AtomicBool,
    pass_stop: &'a AtomicBool,
    ends: &'a dyn Fn(&[WrittenAt]) -> Option<PassEnd>,
    points: Vec<WrittenAt>,
    /// When the job's clock started, as closely as its reports tell
    /// (none from a job that failed to start).
    started: Option<Instant>,
    checked: Duration,
    end: Option<PassEnd>,
}

impl Observer for Watch<'_> {
    fn progress(&mut self, p: &Progress) {
        self.inner.progress(p);
        // The job's clock read `elapsed` a little before now: every report
        // bounds its start from above, the earliest bound is the closest.
        if let Some(start) = Instant::now().checked_sub(p.elapsed) {
            self.started = Some(self.started.map_or(start, |s| s.min(start)));
        }
        self.points.push(WrittenAt {
            time: Nanos::from_duration(p.elapsed),
            bytes: Bytes(p.bytes),
        });
        if self.end.is_some() {
            return;
        }
        if self.user_stop.load(Ordering::Relaxed) {
            self.end = Some(PassEnd::Interrupted);
        } else if p.elapsed >= self.checked + CHECK_EVERY {
            self.checked = p.elapsed;
            self.end = (self.ends)(&self.points);
        }
        if self.end.is_some() {
            self.pass_stop.store(true, Ordering::Relaxed);
        }
    }
}

/// One pass: its job, its full series and why it ended.
struct Pass {
    job: DiskJobResult,
    pub(crate) series: SummedSeries,
    end: PassEnd,
}

impl Pass {
    /// What the pass's rates are read from: across MPI ranks, the stretch
    /// every rank wrote in (a rank left alone after the others ended
    /// writes at a rate of its own, stalls and all).
    fn analysed(&self) -> &[WrittenAt] {
        self.series.together()
    }
}

fn run_pass(
    spec: &DiskJobSpec,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
    ends: &dyn Fn(&[WrittenAt]) -> Option<PassEnd>,
) -> Result<Pass, DiskError> {
    let valid = crate::validate_job(spec, target);
    let pass_stop = AtomicBool::new(stop.load(Ordering::Relaxed));
    let mut watch = Watch {
        inner: obs,
        user_stop: stop,
        pass_stop: &pass_stop,
        ends,
        points: vec![WrittenAt {
            time: Nanos(0),
            bytes: Bytes(0),
        }],
        started: None,
        checked: Duration::ZERO,
        end: None,
    };
    // begin and measured whether or not the job could run, so an
    // observer that keeps ranks in step (MPI) sees every pass.
    watch.inner.begin(&spec.name);
    let job = valid.and_then(|()| runner::run_job(spec, target, &pass_stop, &mut watch));
    watch.inner.end();
    let Watch {
        end: watched,
        mut points,
        started,
        ..
    } = watch;
    let end = match watched {
        _ if stop.load(Ordering::Relaxed) => PassEnd::Interrupted,
        Some(end) => end,
        None => PassEnd::Region,
    };
    let job = job.map(|mut job| {
        // Stopping the pass on purpose is no interruption.
        job.interrupted = end == PassEnd::Interrupted;
        // The job's own total is the last word: the progress reports are
        // taken every 100 ms and may miss the final completions.
        if let Some(w) = &job.write {
            if points.last().is_none_or(|p| p.time < w.runtime) {
                points.push(WrittenAt {
                    time: w.runtime,
                    bytes: w.io_bytes,
                });
            }
        }
        job
    });
    let job = obs.measured(job)?;
    let started = started.unwrap_or_else(Instant::now);
    let series = obs.series(PassSeries { started, points })?;
    Ok(Pass { job, series, end })
}

/// The series kept with the result: points at least [`STORED_STEP`] apart
/// (farther on long passes), the first and last always.
fn thin(points: &[WrittenAt]) -> Vec<WrittenAt> {
    let Some(last) = points.last() else {
        return Vec::new();
    };
    let step = STORED_STEP.max(last.time.as_duration() / STORED_POINTS);
    let mut out: Vec<WrittenAt> = Vec::new();
    for p in points {
        if out
            .last()
            .is_none_or(|q| p.time.as_duration() >= q.time.as_duration() + step)
        {
            out.push(*p);
        }
    }
    if out.last() != Some(last) {
        out.push(*last);
    }
    out
}

fn summary(pass: &Pass, cliff: Option<Cliff>, job: usize) -> SustainedPass {
    let last = pass.series.points.last().copied().unwrap_or(WrittenAt {
        time: Nanos(0),
        bytes: Bytes(0),
    });
    SustainedPass {
        written: last.bytes,
        elapsed: last.time,
        mean_rate: BytesPerSec::over(last.bytes, last.time),
        cliff,
        end: pass.end,
        series: thin(&pass.series.points),
        job,
    }
}

/// The first pass's end under `--until-steady`: a drop, then a rate
/// steady for `span` after it.
fn steady_after_drop(points: &[WrittenAt], span: Nanos, bs: Bytes) -> Option<PassEnd> {
    let params = CliffParams::default();
    let cliff = find_cliff(points, &params)?;
    let since = Nanos(cliff.time.get() + params.hold.get());
    steady(points, since, span, STEADY_TOLERANCE, bs).then_some(PassEnd::Steady)
}

/// The recovery pass's end: a drop with a steady rate after it, a steady
/// slow rate from the start (nothing came back), or twice the first
/// cache written without a drop (it all came back).
fn recovery_seen(points: &[WrittenAt], first: &Cliff, span: Nanos, bs: Bytes) -> Option<PassEnd> {
    if steady_after_drop(points, span, bs).is_some() {
        return Some(PassEnd::Enough);
    }
    let last = points.last()?;
    if last.bytes.get() >= first.at.get().saturating_mul(2) {
        return Some(PassEnd::Enough);
    }
    let mid = (first.rate_before.0 + first.rate_after.0) / 2.0;
    let from = Nanos(last.time.get().saturating_sub(span.get()));
    let slow = rate_between(points, from, last.time).0 < mid;
    (slow && steady(points, Nanos(0), span, STEADY_TOLERANCE, bs)).then_some(PassEnd::Enough)
}

/// How much cache the second pass found: its own cliff when it has one;
/// else, when it ran at the slow rate, the bytes it wrote above what the
/// slow rate alone would have written, turned into bytes at the fast rate
/// (a cache too small for a cliff of its own, or none); else all it wrote,
/// as a lower bound.
fn recovered(pass: &[WrittenAt], first: &Cliff) -> (Bytes, bool) {
    if let Some(c) = find_cliff(pass, &CliffParams::default()) {
        return (c.at, false);
    }
    let Some(last) = pass.last() else {
        return (Bytes(0), false);
    };
    let (fast, slow) = (first.rate_before.0, first.rate_after.0);
    let (t, b) = (last.time.as_secs_f64(), last.bytes.get() as f64);
    if b / t.max(1e-9) >= (fast + slow) / 2.0 {
        return (last.bytes, true);
    }
    // Written = fast * T + slow * (t - T), so the fast stretch lasted
    // T = (b - slow * t) / (fast - slow) and wrote fast * T.
    let fast_time = ((b - slow * t) / (fast - slow)).clamp(0.0, t);
    (Bytes((fast * fast_time).min(b).round() as u64), false)
}

/// The label of a wait state's burst `k` (from 1), as the outline has it.
pub(crate) fn hir_burst_label(idle: Nanos, k: u32, of: u32) -> String {
    format!("HIR idle {idle}: burst {k} of {of}")
}

/// The label of the continuous writing after a wait state.
pub(crate) fn hir_return_label(idle: Nanos) -> String {
    format!("HIR idle {idle}: back to saturation")
}

/// How host idle recovery ended.
enum HirEnd {
    /// Every wait state ran.
    Done,
    /// A stop ended it, in a wait state's bursts or in the continuous
    /// writing after them.
    Stopped,
    /// A burst or the writing after the bursts failed.
    Failed(DiskError),
}

/// Why host idle recovery did not run to its end, and where: the wait
/// state it was in, and whether in its bursts or the writing after them.
fn hir_cut_short(ran: &Hir, h: HirOptions, why: &str) -> Warning {
    let at = match ran.states.last() {
        Some(st) if st.bursts.len() == h.bursts as usize => format!(
            "in the continuous writing after the wait state of {} idle",
            st.idle
        ),
        Some(st) => format!(
            "in the wait state of {} idle, {} of its {} bursts run",
            st.idle,
            st.bursts.len(),
            h.bursts
        ),
        None => "before the first wait state".into(),
    };
    Warning::new(
        WarningKind::NotSteady,
        format!("pts-wsat --hir: {why} {at}: the wait states after it did not run"),
    )
}

/// PTS's host idle recovery after the saturated pass: each wait state's
/// bursts, each after its idle time, then as long again of continuous
/// writing. A stop or a failed burst ends it where it is, keeping what ran.
fn host_idle_recovery(
    o: &SustainedOptions,
    hir: HirOptions,
    baseline: BytesPerSec,
    region: Bytes,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> (Hir, HirEnd) {
    let timed = |name: String, time: Nanos| DiskJobSpec {
        runtime: Some(time),
        ..spec(o, region, target, &name)
    };
    let rate = |pass: &Pass| pass.job.write.as_ref().map_or(BytesPerSec(0.0), |w| w.bw);
    let began = Instant::now();
    let mut out = Hir {
        burst: hir.burst_time,
        baseline,
        states: Vec::new(),
    };
    for idle in hir.idles() {
        out.states.push(HirState {
            idle,
            bursts: Vec::new(),
            return_rate: None,
        });
        let state = out.states.last_mut().expect("just pushed");
        for k in 1..=hir.bursts {
            if !pause(idle.as_duration(), stop, obs) {
                return (out, HirEnd::Stopped);
            }
            let at = Nanos::from_duration(began.elapsed());
            let burst = timed(hir_burst_label(idle, k, hir.bursts), hir.burst_time);
            let pass = match run_pass(&burst, target, stop, obs, &|_| None) {
                Ok(p) if p.end == PassEnd::Interrupted => return (out, HirEnd::Stopped),
                Ok(p) => p,
                Err(e) => return (out, HirEnd::Failed(e)),
            };
            state.bursts.push(HirBurst {
                at,
                rate: rate(&pass),
            });
        }
        let back = timed(hir_return_label(idle), hir.return_time());
        match run_pass(&back, target, stop, obs, &|_| None) {
            Ok(p) if p.end == PassEnd::Interrupted => return (out, HirEnd::Stopped),
            Ok(p) => state.return_rate = Some(rate(&p)),
            Err(e) => return (out, HirEnd::Failed(e)),
        }
    }
    (out, HirEnd::Done)
}

/// Run the test on `target`.
pub(crate) fn run(
    o: &SustainedOptions,
    target: &OpenTarget,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
) -> Result<ProfileOutcome, DiskError> {
    let bs = o.pattern.bs;
    let region = region(target.info.size, bs);
    let mut warnings = Vec::new();
    let wsat = o.wsat.then(|| Wsat {
        threads: o.pattern.threads,
        purge: super::pts::purge(target, region),
    });
    if let Some(Wsat {
        purge: Purge::Skipped { why },
        ..
    }) = &wsat
    {
        warnings.push(Warning::new(
            WarningKind::NotSteady,
            format!("pts-wsat: the target was not purged first: {why}"),
        ));
    }
    let name = if o.wsat {
        "write saturation"
    } else {
        "sustained write"
    };
    let first_spec = spec(o, region, target, name);
    let first = match o.until_steady {
        Some(span) => run_pass(&first_spec, target, stop, obs, &|p| {
            steady_after_drop(p, span, bs)
        })?,
        None => run_pass(&first_spec, target, stop, obs, &|_| None)?,
    };
    let cliff = find_cliff(first.analysed(), &CliffParams::default());
    let pass = summary(&first, cliff, 0);
    let mut interrupted = first.end == PassEnd::Interrupted;
    if cliff.is_none() && !interrupted {
        warnings.push(Warning::new(
            WarningKind::NoCliff,
            format!(
                "no cliff in {}: the rate held at {:.2} MB/s over everything written; \
                 a write cache, if there is one, is larger (write more with --size or a \
                 larger target)",
                pass.written,
                pass.mean_rate.mb_per_sec()
            ),
        ));
    }
    let mut jobs = vec![first.job];
    obs.finished(&jobs);
    let mut recover_pass = None;
    let mut recovery = None;
    if let (Some(idle), false) = (o.recover, interrupted) {
        match cliff {
            None => warnings.push(Warning::new(
                WarningKind::NoCliff,
                "--recover: the first pass had no cliff, so there was no cache to recover; \
                 the second pass was not run",
            )),
            Some(c) if pause(idle.as_duration(), stop, obs) => {
                let span = o.until_steady.unwrap_or(STEADY_SPAN);
                let again = spec(o, region, target, &format!("{name} after idle"));
                let second = run_pass(&again, target, stop, obs, &|p| {
                    recovery_seen(p, &c, span, bs)
                })?;
                interrupted = second.end == PassEnd::Interrupted;
                let (bytes, at_least) = recovered(second.analysed(), &c);
                let own_cliff = find_cliff(second.analysed(), &CliffParams::default());
                recover_pass = Some(summary(&second, own_cliff, jobs.len()));
                if !interrupted {
                    recovery = Some(Recovery {
                        idle,
                        recovered: bytes,
                        at_least,
                    });
                }
                jobs.push(second.job);
                obs.finished(&jobs);
            }
            Some(_) => interrupted = true,
        }
    }
    let mut hir = None;
    if let (Some(h), false) = (o.hir, interrupted) {
        let baseline = cliff.map_or(pass.mean_rate, |c| c.rate_after);
        let (ran, end) = host_idle_recovery(o, h, baseline, region, target, stop, obs);
        match end {
            HirEnd::Done => {}
            HirEnd::Stopped => {
                warnings.push(hir_cut_short(&ran, h, "stopped"));
                interrupted = true;
            }
            // Hours of wait states are kept; the run reads back as
            // interrupted, with what it measured.
            HirEnd::Failed(e) => {
                warnings.push(hir_cut_short(&ran, h, &format!("failed ({e})")));
                interrupted = true;
            }
        }
        hir = Some(ran);
    }
    Ok(ProfileOutcome {
        jobs,
        result: ProfileResult::Sustained(SustainedResult {
            bs,
            depth: o.pattern.depth,
            region,
            until_steady: o.until_steady.is_some(),
            pass,
            recover_pass,
            recovery,
            wsat,
            hir,
        }),
        warnings,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = (1u64 << 20) as f64;

    /// A pass every 100 ms: `fast` bytes/s for `cache` bytes, then `slow`.
    fn pass(secs: f64, cache: f64, fast: f64, slow: f64) -> Vec<WrittenAt> {
        let knee = cache / fast;
        (0..=(secs * 10.0) as u64)
            .map(|i| {
                let t = i as f64 / 10.0;
                let b = if t < knee {
                    fast * t
                } else {
                    cache + slow * (t - knee)
                };
                WrittenAt {
                    time: Nanos((t * 1e9) as u64),
                    bytes: Bytes(b as u64),
                }
            })
            .collect()
    }

    fn first_cliff() -> Cliff {
        find_cliff(
            &pass(20.0, 256.0 * MIB, 100.0 * MIB, 20.0 * MIB),
            &CliffParams::default(),
        )
        .unwrap()
    }

    #[test]
    fn until_steady_waits_for_the_span_after_the_drop() {
        let span = Nanos::from_secs(5);
        let short = pass(9.0, 256.0 * MIB, 100.0 * MIB, 20.0 * MIB);
        assert_eq!(steady_after_drop(&short, span, Bytes(BLOCK)), None);
        let long = pass(12.0, 256.0 * MIB, 100.0 * MIB, 20.0 * MIB);
        assert_eq!(
            steady_after_drop(&long, span, Bytes(BLOCK)),
            Some(PassEnd::Steady)
        );
    }

    #[test]
    fn a_tail_written_after_the_first_rank_ended_is_not_read_for_the_rates() {
        // Three ranks summed: the cliff rig's shape for 13 s, when the
        // first rank ended; the last one then stalled for 7.5 s and wrote
        // on alone (loaded run 1 of a0c8334, where the cache read +26%).
        let mut points = pass(13.0, 256.0 * MIB, 100.0 * MIB, 20.0 * MIB);
        let end = *points.last().unwrap();
        for i in 1..=160u64 {
            let t = end.time.get() + i * 100_000_000;
            let b = end.bytes.get() + i.saturating_sub(75) * (2 * MIB as u64);
            points.push(WrittenAt {
                time: Nanos(t),
                bytes: Bytes(b),
            });
        }
        let summed = SummedSeries {
            points,
            together_until: end.time,
        };
        let params = CliffParams::default();
        let together = find_cliff(summed.together(), &params).unwrap();
        let near = |got: f64, want: f64| (got / want - 1.0).abs() < 0.03;
        assert!(near(together.at.get() as f64, 256.0 * MIB), "{together:?}");
        assert!(near(together.rate_after.0, 20.0 * MIB), "{together:?}");
        // Read over everything, the stall drags the rate after down.
        let all = find_cliff(&summed.points, &params).unwrap();
        assert!(!near(all.rate_after.0, 20.0 * MIB), "{all:?}");
    }

    #[test]
    fn a_recovered_cache_is_measured_in_bytes_at_the_fast_rate() {
        let first = first_cliff();
        // Half the cache came back: its own cliff.
        let half = pass(15.0, 128.0 * MIB, 100.0 * MIB, 20.0 * MIB);
        let (b, at_least) = recovered(&half, &first);
        assert!(
            (b.get() as f64 - 128.0 * MIB).abs() < 0.03 * 128.0 * MIB,
            "{b}"
        );
        assert!(!at_least);
        // A sliver, too short for a cliff of its own: from the bytes above
        // the slow rate.
        let sliver = pass(15.0, 64.0 * MIB, 100.0 * MIB, 20.0 * MIB);
        let (b, _) = recovered(&sliver, &first);
        assert!(
            (b.get() as f64 - 64.0 * MIB).abs() < 0.03 * 64.0 * MIB,
            "{b}"
        );
        // Nothing came back.
        let none = pass(15.0, 0.0, 100.0 * MIB, 20.0 * MIB);
        assert!(recovered(&none, &first).0.get() < MIB as u64);
        assert!(recovery_seen(&none, &first, Nanos::from_secs(10), Bytes(BLOCK)).is_some());
        // All of it and more: a lower bound.
        let all = pass(5.0, 1e12, 100.0 * MIB, 20.0 * MIB);
        let (b, at_least) = recovered(&all, &first);
        assert!(at_least && b.get() > 400 * MIB as u64, "{b}");
        assert_eq!(
            recovery_seen(
                &pass(6.0, 1e12, 100.0 * MIB, 20.0 * MIB),
                &first,
                Nanos(1),
                Bytes(BLOCK)
            ),
            Some(PassEnd::Enough)
        );
    }

    #[test]
    fn the_stored_series_is_thinned_but_keeps_both_ends() {
        let p = pass(30.0, 256.0 * MIB, 100.0 * MIB, 20.0 * MIB);
        let t = thin(&p);
        assert_eq!(t.first(), p.first());
        assert_eq!(t.last(), p.last());
        assert!(t.len() < p.len() / 2 && t.len() > 100, "{}", t.len());
    }

    #[test]
    fn a_too_short_steady_span_is_refused_naming_the_flag() {
        let s = ProfileSettings {
            until_steady: Some(Nanos::from_secs(1)),
            ..ProfileSettings::default()
        };
        let e = plan(&s).unwrap_err().to_string();
        assert!(e.contains("--until-steady"), "{e}");
    }

    #[test]
    fn hir_takes_the_specifications_schedule_and_refuses_what_cannot_run() {
        let with = |hir: Option<u32>, burst: Option<Nanos>, recover: Option<Nanos>| {
            plan_wsat(&ProfileSettings {
                hir,
                hir_burst: burst,
                recover,
                ..ProfileSettings::default()
            })
        };
        let h = with(Some(360), None, None).unwrap().hir.unwrap();
        assert_eq!(h.burst_time, Nanos::from_secs(5));
        let idles: Vec<u64> = h.idles().map(|n| n.0 / 1_000_000_000).collect();
        assert_eq!(idles, [5, 10, 15, 25, 50], "PTS 2.0.2's wait states");
        assert_eq!(h.return_time(), Nanos::from_secs(1800));
        assert!(with(None, None, None).unwrap().hir.is_none());
        for (hir, burst, recover, names) in [
            (None, Some(Nanos::from_secs(1)), None, "--hir N too"),
            (Some(0), None, None, "at least one burst"),
            (
                Some(HirOptions::MAX_BURSTS + 1),
                None,
                None,
                "try --hir 360",
            ),
            (Some(1), Some(Nanos(0)), None, "longer than 0"),
            (
                Some(1),
                None,
                Some(Nanos::from_secs(60)),
                "give one of them",
            ),
        ] {
            let e = with(hir, burst, recover).unwrap_err().to_string();
            assert!(e.contains(names), "{e}");
        }
    }

    #[test]
    fn a_stop_in_host_idle_recovery_names_where_it_came() {
        let h = HirOptions {
            bursts: 3,
            burst_time: Nanos::from_secs(5),
        };
        let state = |bursts: usize| HirState {
            idle: Nanos::from_secs(10),
            bursts: vec![
                HirBurst {
                    at: Nanos(0),
                    rate: BytesPerSec(1.0),
                };
                bursts
            ],
            return_rate: None,
        };
        let ran = |states: Vec<HirState>| Hir {
            burst: h.burst_time,
            baseline: BytesPerSec(1.0),
            states,
        };
        let said = |r: &Hir| hir_cut_short(r, h, "stopped").message;
        assert!(said(&ran(vec![state(2)]))
            .contains("in the wait state of 10 s idle, 2 of its 3 bursts run"));
        assert!(said(&ran(vec![state(3)]))
            .contains("in the continuous writing after the wait state of 10 s idle"));
        assert!(said(&ran(Vec::new())).contains("before the first wait state"));
    }
}
