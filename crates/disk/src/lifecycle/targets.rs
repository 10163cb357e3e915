//! The targets of a run's jobs, and what becomes of them: opened (or
//! reused by the next job that asks for the same), a verify profile's
//! file kept or removed, the document of a run stopped between two.

use std::sync::atomic::AtomicBool;

use iomark_model::profile::ProfileResult;
use iomark_model::verify::VerifyPhase;
use iomark_model::{now_ms, RunBody, RunDocument, RunStatus, Warning};

use super::{Coordinator, JobOrigin, RunDisplay, VerifyFile};
use crate::plan::DiskOutcome;
use crate::target::{OpenTarget, TargetRequest};
use crate::DiskError;

/// The open target of the job that runs now.
#[derive(Default)]
pub(super) struct Targets {
    /// The open target, with the request it was opened for.
    pub(super) open: Option<(TargetRequest, OpenTarget)>,
}

impl Targets {
    /// The target for a job with `request`: the open one when it serves
    /// (a job file's next job on the same file, as fio reuses a job's
    /// file), else a new one; `None` when a stop signal came first.
    pub(super) fn for_job(
        &mut self,
        request: &TargetRequest,
        stop: &AtomicBool,
        display: &mut dyn RunDisplay,
        coordinator: &mut dyn Coordinator,
    ) -> Result<Option<&mut OpenTarget>, DiskError> {
        let reuse = self
            .open
            .as_ref()
            .is_some_and(|(req, _)| serves(req, request));
        if !reuse {
            // The old test file goes before the new one is made, so a run
            // of several test files never needs the space of two.
            self.open = None;
            let Some(t) = coordinator.open(request, stop, display)? else {
                return Ok(None);
            };
            self.open = Some((request.clone(), t));
        }
        Ok(self.open.as_mut().map(|(_, t)| t))
    }
}

/// Open the target (creating and filling a test file), saying which stale
/// files were removed; `None` when a stop signal came first.
pub fn open_target(
    request: &TargetRequest,
    stop: &AtomicBool,
    display: &mut dyn RunDisplay,
) -> Result<Option<OpenTarget>, DiskError> {
    let target = match OpenTarget::open(request, stop) {
        Ok(t) => t,
        Err(DiskError::Interrupted) => {
            display.say("interrupted before measuring; the test file was removed");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    for p in &target.removed_stale {
        display.say(&format!("removed {} left by a killed run", p.display()));
    }
    Ok(Some(target))
}

/// Whether a target opened for `open` serves a job that asks for `next`.
fn serves(open: &TargetRequest, next: &TargetRequest) -> bool {
    open.path == next.path
        && open.size == next.size
        && open.direct == next.direct
        && (open.write || !next.write)
        && open.data == next.data
}

/// A verify profile's test file once the check is done: a write phase
/// keeps it for the read phase, a read phase removes it (unless
/// `keep`). Called only for a run that was not interrupted: half a fill is
/// no use to a read phase, and the test file goes as any other.
pub(super) fn verify_file_after(
    phase: VerifyPhase,
    target: &mut OpenTarget,
    keep: bool,
) -> Result<Option<VerifyFile>, DiskError> {
    Ok(match phase {
        VerifyPhase::Write => target.keep_test_file()?.map(VerifyFile::Kept),
        VerifyPhase::Read if !keep && crate::target::remove_kept_verify_file(target)? => {
            Some(VerifyFile::Removed(target.info.path.clone()))
        }
        VerifyPhase::Read | VerifyPhase::Both => None,
    })
}

/// The document of a run stopped between jobs, with no target open: the
/// partial document with every finished job.
pub(super) fn interrupted_without_target(mut doc: RunDocument, total: DiskOutcome) -> RunDocument {
    if let RunBody::Disk(run) = &mut doc.body {
        run.jobs = total.jobs;
        run.profile_result = total.result;
        run.probe = total.probe;
        // The rounds were the live view's; the result holds them now.
        run.rounds_so_far.clear();
    }
    doc.warnings.extend(total.warnings);
    doc.status = RunStatus::Interrupted;
    doc.finished_at_ms = now_ms();
    doc
}

impl DiskOutcome {
    /// Add a job file's job `outcome` to the run's, its warnings named by
    /// the job.
    pub(crate) fn add(&mut self, origin: &JobOrigin, outcome: DiskOutcome) {
        self.jobs.extend(outcome.jobs);
        self.warnings
            .extend(outcome.warnings.into_iter().map(|w| Warning {
                message: format!("{origin}: {}", w.message),
                ..w
            }));
        self.fold_result(outcome.result);
        self.interrupted |= outcome.interrupted;
    }

    /// Fold another part's result (a job file's job, a rank) into the
    /// run's: two verify checks combine into one, otherwise the later
    /// result stands.
    pub fn fold_result(&mut self, result: Option<ProfileResult>) {
        self.result = match (self.result.take(), result) {
            (Some(ProfileResult::Verify(run)), Some(ProfileResult::Verify(job))) => Some(
                ProfileResult::Verify(crate::verify::writes::combine(Some(run), job)),
            ),
            (run, job) => job.or(run),
        };
    }
}
