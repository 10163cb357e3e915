//! What the profiles share: running a point-by-point profile (IOmeter's
//! sweep, the block-size sweep, MacBench), one measured job per point, and
//! the warning a `--quick` run carries.

use std::sync::atomic::AtomicBool;

use iomark_model::disk::{DiskJobResult, DiskJobSpec};
use iomark_model::profile::ProfileResult;
use iomark_model::{Warning, WarningKind};

use super::{measure, ProfileObserver, ProfileOutcome};
use crate::target::OpenTarget;
use crate::DiskError;

/// The jobs of a point-by-point profile and the points made of them.
#[derive(Debug)]
pub(super) struct Points<P> {
    /// Every measured job, in order.
    pub jobs: Vec<DiskJobResult>,
    /// One point per job, naming its job by index.
    pub points: Vec<P>,
    /// Whether the stop flag ended the run before its last point.
    pub interrupted: bool,
}

impl<P> Points<P> {
    /// The profile's outcome: `result` made of the points, with `warnings`.
    pub fn into_outcome(
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
