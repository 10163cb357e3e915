//! What the profiles share: the options every job is built from and the
//! one place a job's spec is built, running a point-by-point profile
//! (IOmeter's sweep, the block-size sweep, MacBench), one measured job per
//! point, and the warning a `--quick` run carries.

use std::sync::atomic::AtomicBool;

use iomark_model::disk::{DataPattern, DiskJobResult, DiskJobSpec, EngineKind, RwMode};
use iomark_model::profile::ProfileResult;
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{Warning, WarningKind};

use super::settings::ProfileSettings;
use super::{measure, ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// The options every job of a profile is built from: the settings the
/// profiles have in common with a custom job (`--engine`, `--data`,
/// `--seed`, `--runtime`, `--ramp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PointSpec {
    /// The engine of the job.
    engine: EngineKind,
    /// What is written.
    data: DataPattern,
    /// Seed for offsets and data.
    seed: u64,
    /// Measured time; `None` for one pass over the region.
    runtime: Option<Nanos>,
    /// Unmeasured time first.
    ramp: Nanos,
}

impl PointSpec {
    /// One pass over the region (no time limit, no ramp) with `engine`.
    pub(crate) fn one_pass(engine: EngineKind, data: DataPattern, seed: u64) -> Self {
        PointSpec {
            engine,
            data,
            seed,
            runtime: None,
            ramp: Nanos(0),
        }
    }

    /// The same, measured for `runtime`.
    pub(crate) fn timed(self, runtime: Nanos) -> Self {
        PointSpec {
            runtime: Some(runtime),
            ..self
        }
    }

    /// The job `name` doing `rw` in blocks of `bs` over the whole of
    /// `target`, direct where the target bypasses the cache with this
    /// engine: one thread with one I/O in flight, handed to the kernel at
    /// once, 70% reads in a mix. A profile changes what its jobs do
    /// differently with struct-update syntax.
    pub(crate) fn job(
        &self,
        name: String,
        rw: RwMode,
        bs: Bytes,
        target: &OpenTarget,
    ) -> DiskJobSpec {
        DiskJobSpec {
            name,
            rw,
            bs,
            iodepth: 1,
            iodepth_batch: 1,
            numjobs: 1,
            size: target.info.size,
            runtime: self.runtime,
            ramp: self.ramp,
            engine: self.engine,
            direct: target.bypasses_cache(self.engine),
            data: self.data,
            rwmix_read: 70,
            seed: self.seed,
            steady_state: None,
        }
    }
}

/// The options the point-by-point profiles (IOmeter's sweep, the
/// block-size sweep, MacBench) share: each point one job, measured for
/// `runtime` after `ramp`, with the page cache dropped before it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PointOptions {
    /// Not counted, before each point.
    pub(crate) ramp: Nanos,
    /// Measured time of each point.
    pub(crate) runtime: Nanos,
    /// Data written.
    pub(crate) data: DataPattern,
    /// Whether `--quick` shortened the points.
    pub(crate) quick: bool,
    /// Seed for offsets and data.
    pub(crate) seed: u64,
    /// Leave the page cache as the previous point left it.
    pub(crate) keep_cache: bool,
}

impl PointOptions {
    /// A profile's defaults: its `ramp` and `runtime` (the `--quick` ones
    /// when `quick`), random data, seed 1.
    pub(crate) fn defaults(quick: bool, ramp: Nanos, runtime: Nanos) -> Self {
        PointOptions {
            ramp,
            runtime,
            data: DataPattern::Random,
            quick,
            seed: 1,
            keep_cache: false,
        }
    }

    /// These options with what the user gave: `--ramp`, `--runtime`,
    /// `--data`, `--seed`, `--keep-cache` (a profile that takes no
    /// `--ramp` has it refused before).
    pub(crate) fn given(self, s: &ProfileSettings) -> Self {
        PointOptions {
            ramp: s.ramp.unwrap_or(self.ramp),
            runtime: s.runtime.unwrap_or(self.runtime),
            data: s.data,
            quick: self.quick,
            seed: s.seed,
            keep_cache: s.keep_cache,
        }
    }

    /// What each point's job is built from, run with `engine`.
    pub(crate) fn spec(&self, engine: EngineKind) -> PointSpec {
        PointSpec {
            ramp: self.ramp,
            ..PointSpec::one_pass(engine, self.data, self.seed).timed(self.runtime)
        }
    }
}

/// The jobs of a point-by-point profile and the points made of them.
#[derive(Debug)]
pub(super) struct Points<P> {
    /// Every measured job, in order.
    jobs: Vec<DiskJobResult>,
    /// One point per job, naming its job by index.
    points: Vec<P>,
    /// Whether the stop flag ended the run before its last point.
    interrupted: bool,
}

impl<P> Points<P> {
    /// The profile's outcome: `result` made of the points, with `warnings`.
    pub(crate) fn into_outcome(
        self,
        warnings: Vec<Warning>,
        result: impl FnOnce(Vec<P>) -> ProfileResult,
    ) -> ProfileOutcome {
        ProfileOutcome {
            jobs: self.jobs,
            result: result(self.points),
            warnings,
            interrupted: self.interrupted,
        }
    }
}

/// Run each point's job in order, under the job's name, and make the
/// profile's point of each finished job with `point` (given the job's
/// index). A job the stop flag ends is not kept, and ends the run. Each
/// job starts with the target's pages dropped unless `keep_cache`.
pub(super) fn run_points<K, P>(
    target: &OpenTarget,
    keep_cache: bool,
    stop: &AtomicBool,
    obs: &mut dyn ProfileObserver,
    specs: impl IntoIterator<Item = (K, DiskJobSpec)>,
    mut point: impl FnMut(K, &DiskJobResult, usize) -> P,
) -> Result<Points<P>, DiskError> {
    let mut run = Points {
        jobs: Vec::new(),
        points: Vec::new(),
        interrupted: false,
    };
    for (key, spec) in specs {
        let Some(job) = measure(&spec, target, keep_cache, stop, obs, &spec.name)? else {
            run.interrupted = true;
            break;
        };
        run.points.push(point(key, &job, run.jobs.len()));
        run.jobs.push(job);
        obs.finished(&run.jobs);
    }
    Ok(run)
}

/// The warning of a run `--quick` shortened, `what` saying how; none for a
/// full run.
pub(super) fn shortened(quick: bool, what: impl FnOnce() -> String) -> Vec<Warning> {
    if !quick {
        return Vec::new();
    }
    vec![Warning::new(
        WarningKind::Shortened,
        format!("--quick: {}", what()),
    )]
}
