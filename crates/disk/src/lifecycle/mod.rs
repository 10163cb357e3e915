//! A disk run from its plan to its stored document, written once for
//! `iomark disk`, a job file and (rank 0 of) an MPI job: open the target,
//! record the run as begun, recall what is known of the device, run (the
//! short probe first when asked), check, write up, remember what the run
//! taught, finish the record.
//!
//! The record goes through a [`RunSink`] (the binary's is the results
//! store; [`MemorySink`] keeps it in memory), the progress through a
//! [`RunDisplay`]; printing the finished document is the caller's. So the
//! whole lifecycle runs in a unit test with the null engine, as
//! hyperfine tests its scheduler with a mock executor.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use iomark_disk::lifecycle::{self, MemorySink, NoDisplay, RunOptions, RunPlan};
//! use iomark_disk::plan::DiskSettings;
//!
//! let plan = DiskSettings { path: ".".into(), ..DiskSettings::default() }.build()?;
//! let mut sink = MemorySink::default();
//! let end = lifecycle::run(
//!     &RunPlan::single(plan),
//!     &RunOptions::default(),
//!     &mut sink,
//!     &mut NoDisplay,
//!     &AtomicBool::new(false),
//! )?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod known;
mod sink;
mod watch;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use iomark_host::cgroup::SelfLimit;
use iomark_model::artefact::{ProbeVerdict, RatedSpeed};
use iomark_model::profile::ProfileResult;
use iomark_model::stored::RunId;
use iomark_model::verify::VerifyPhase;
use iomark_model::{now_ms, RunBody, RunDocument, RunStatus, Warning};

pub use known::Known;
pub use sink::{MemorySink, RunSink};
pub use watch::{NoDisplay, RunDisplay};

use crate::plan::{run_document_for, DiskOutcome, DiskPlan};
use crate::profiles::artefacts::ArtefactsOptions;
use crate::profiles::outline::Tracker;
use crate::profiles::ProfilePlan;
use crate::target::{OpenTarget, TargetRequest};
use crate::DiskError;
use watch::{Checkpoints, Watch};

/// What a run runs: one plan (`iomark disk`), or a job file's plans one
/// after another, stored as one run.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The profile name the run is stored under: `custom`, a profile's,
    /// or `fio-job`.
    pub name: &'static str,
    /// The jobs, in order; at least one.
    pub jobs: Vec<RunJob>,
}

/// One job of a run.
#[derive(Debug, Clone)]
pub struct RunJob {
    /// The checked plan.
    pub plan: DiskPlan,
    /// The job keeps the page cache (a job file's `invalidate=0`).
    pub keep_cache: bool,
    /// Where a job file's job was written, to name it in messages and
    /// warnings; `None` for a run of one plan.
    pub origin: Option<JobOrigin>,
}

/// A job file's job: its `[name]` and line.
#[derive(Debug, Clone)]
pub struct JobOrigin {
    /// The section's name.
    pub name: String,
    /// The line it starts on.
    pub line: usize,
}

impl std::fmt::Display for JobOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "job [{}] (line {})", self.name, self.line)
    }
}

impl RunPlan {
    /// A run of one plan, stored under its workload's name.
    pub fn single(plan: DiskPlan) -> RunPlan {
        RunPlan {
            name: plan.workload.name(),
            jobs: vec![RunJob {
                plan,
                keep_cache: false,
                origin: None,
            }],
        }
    }
}

/// How the run goes, beyond its plan.
#[derive(Debug, Default)]
pub struct RunOptions<'a> {
    /// `--keep-cache`: no job drops the target's pages first.
    pub keep_cache: bool,
    /// `--rated`: the speed the device is rated at, remembered for it.
    pub rated: Option<RatedSpeed>,
    /// The short artefacts probe before the first job, unless a verdict is
    /// remembered for the device (the default profile's).
    pub probe_first: Option<ArtefactsOptions>,
    /// `--keep-verify-file`: a verify read phase leaves the kept file.
    pub keep_verify_file: bool,
    /// The memory limit the process runs under (`--mem-limit`), whose
    /// record goes with the run.
    pub limit: Option<&'a SelfLimit>,
    /// The command line stored with the run.
    pub command_line: Vec<String>,
}

/// How a run ended.
#[derive(Debug)]
pub enum RunEnd {
    /// A stop signal came before anything was measured or recorded.
    NotStarted,
    /// The run measured (all or part: see the document's status).
    Finished(Box<Finished>),
}

/// A finished run: its document as recorded, and what the caller says.
#[derive(Debug)]
pub struct Finished {
    /// The run's document.
    pub doc: RunDocument,
    /// Its id in the sink, when it was stored.
    pub id: Option<RunId>,
    /// A verify found bad data (fio exits non-zero then).
    pub verify_failed: bool,
    /// What became of a verify profile's test file.
    pub verify_file: Option<VerifyFile>,
}

impl Finished {
    /// Whether a stop signal ended the run early.
    pub fn interrupted(&self) -> bool {
        self.doc.status == RunStatus::Interrupted
    }
}

/// A verify profile's test file after the run.
#[derive(Debug, Clone, PartialEq)]
pub enum VerifyFile {
    /// A write phase kept it for the read phase.
    Kept(PathBuf),
    /// A read phase removed the file a write phase kept.
    Removed(String),
}

/// Why a run failed; what failed is named, the disk library's error is its
/// source.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Opening or preparing the target.
    #[error(transparent)]
    Disk(#[from] DiskError),
    /// A step of the run, named.
    #[error("{what}")]
    In {
        /// The step, e.g. `profile cdm on /mnt/iomark-test.0`.
        what: String,
        /// What went wrong.
        #[source]
        source: DiskError,
    },
}

fn within(what: impl FnOnce() -> String) -> impl FnOnce(DiskError) -> RunError {
    move |source| RunError::In {
        what: what(),
        source,
    }
}

/// The run as recorded so far: its partial document and what is known of
/// its device.
struct Recording {
    partial: RunDocument,
    known: Known,
}

/// The open target of the job that runs now.
#[derive(Default)]
struct Targets {
    /// The open target, with the request it was opened for.
    open: Option<(TargetRequest, OpenTarget)>,
}

/// Run `plan` to its end, recording it through `sink` and showing it on
/// `display`: a stop signal ends it early with what it measured.
pub fn run(
    plan: &RunPlan,
    opts: &RunOptions<'_>,
    sink: &mut dyn RunSink,
    display: &mut dyn RunDisplay,
    stop: &AtomicBool,
) -> Result<RunEnd, RunError> {
    let started_at_ms = now_ms();
    let mut targets = Targets::default();
    let mut recording: Option<Recording> = None;
    let mut total = DiskOutcome::default();
    let mut fresh_probe: Option<ProbeVerdict> = None;
    for (i, job) in plan.jobs.iter().enumerate() {
        let Some(target) = targets.for_job(&job.plan.request, stop, display)? else {
            total.interrupted = true;
            break;
        };
        let workload = &job.plan.workload;
        let name_job = |what: String| match &job.origin {
            Some(o) => format!("{o}: {what}"),
            None => what,
        };
        match &job.origin {
            Some(_) => workload
                .check_target(target)
                .map_err(within(|| name_job(workload.describe())))?,
            None => workload.check_target(target)?,
        }
        if !job.keep_cache && !opts.keep_cache {
            target.invalidate_cache();
        }
        // Recorded as soon as the target is open, so a run that is killed
        // reads back as interrupted; finish() replaces it with the result.
        let rec = recording.get_or_insert_with(|| {
            let mut partial = run_document_for(
                &target.info,
                &target.warnings,
                plan.name,
                DiskOutcome::default(),
                started_at_ms,
                opts.command_line.clone(),
            );
            sink.begin(&mut partial);
            let known = Known::recall(
                sink,
                partial.device.as_ref(),
                target.direct,
                opts.rated.clone(),
            );
            Recording { partial, known }
        });
        let outline = workload.outline(target).repeated(job.plan.repeat);
        if let (0, Some(probe), None) = (i, &opts.probe_first, rec.known.probe()) {
            if target.writable {
                // The time left counts the run that follows the probe.
                let then = Tracker::new(outline.clone()).left();
                let plan = ProfilePlan::Artefacts(probe.clone());
                display.follow(plan.outline(target.info.size), "probe ", Some(then));
                let mut watch = Watch {
                    display: &mut *display,
                    checkpoints: None,
                };
                let outcome = plan.run(target, stop, &mut watch).map_err(within(|| {
                    format!("artefacts probe on {}", target.info.path)
                }))?;
                display.end();
                if let ProfileResult::Artefacts(a) = outcome.result {
                    if let Some(v) = &a.verdict {
                        rec.known.learned(sink, v.clone());
                    }
                    fresh_probe = a.verdict;
                }
            }
        }
        display.follow(outline, "", None);
        let mut checkpoints = Checkpoints {
            sink: &mut *sink,
            partial: &mut rec.partial,
        };
        let mut watch = Watch {
            display: &mut *display,
            checkpoints: Some(&mut checkpoints),
        };
        let outcome = workload
            .run_repeated(target, stop, &mut watch, job.plan.verify, job.plan.repeat)
            .map_err(within(|| {
                format!("{} on {}", name_job(workload.describe()), target.info.path)
            }))?;
        let interrupted = outcome.interrupted;
        match &job.origin {
            Some(o) => total.add(o, outcome),
            None => total = outcome,
        }
        if plan.jobs.len() > 1 {
            checkpoints.jobs(&total.jobs);
        }
        if interrupted {
            break;
        }
    }
    display.close();
    let Some(mut rec) = recording else {
        return Ok(RunEnd::NotStarted);
    };
    total.probe = fresh_probe.or_else(|| rec.known.probe().cloned());
    rec.known.after_run(sink, &mut total);
    let verify_failed = matches!(&total.result, Some(ProfileResult::Verify(v)) if v.failed());
    let verify_file = match (&total.result, targets.open.as_mut()) {
        (Some(ProfileResult::Verify(v)), Some((_, target))) if !total.interrupted => {
            verify_file_after(v.phase, target, opts.keep_verify_file)?
        }
        _ => None,
    };
    let mut doc = match targets.open.take() {
        Some((_, target)) => run_document_for(
            &target.info,
            &target.warnings,
            plan.name,
            total,
            started_at_ms,
            opts.command_line.clone(),
        ),
        // Stopped while a later job's test file was made: the document of
        // the jobs before it, on the first target.
        None => interrupted_without_target(rec.partial, total),
    };
    if let (RunBody::Disk(run), Some(limit)) = (&mut doc.body, opts.limit) {
        run.cgroup = Some(Box::new(limit.usage()));
    }
    let id = sink.finish(&mut doc);
    Ok(RunEnd::Finished(Box::new(Finished {
        doc,
        id,
        verify_failed,
        verify_file,
    })))
}

impl Targets {
    /// The target for a job with `request`: the open one when it serves
    /// (a job file's next job on the same file, as fio reuses a job's
    /// file), else a new one; `None` when a stop signal came first.
    fn for_job(
        &mut self,
        request: &TargetRequest,
        stop: &AtomicBool,
        display: &mut dyn RunDisplay,
    ) -> Result<Option<&mut OpenTarget>, DiskError> {
        let reuse = self
            .open
            .as_ref()
            .is_some_and(|(req, _)| serves(req, request));
        if !reuse {
            // The old test file goes before the new one is made, so a run
            // of several test files never needs the space of two.
            self.open = None;
            let Some(t) = open_target(request, stop, display)? else {
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
fn verify_file_after(
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
fn interrupted_without_target(mut doc: RunDocument, total: DiskOutcome) -> RunDocument {
    if let RunBody::Disk(run) = &mut doc.body {
        run.jobs = total.jobs;
        run.profile_result = total.result;
        run.probe = total.probe;
    }
    doc.warnings.extend(total.warnings);
    doc.status = RunStatus::Interrupted;
    doc.finished_at_ms = now_ms();
    doc
}

impl DiskOutcome {
    /// Add a job file's job `outcome` to the run's, its warnings named by
    /// the job.
    pub fn add(&mut self, origin: &JobOrigin, outcome: DiskOutcome) {
        self.jobs.extend(outcome.jobs);
        self.warnings
            .extend(outcome.warnings.into_iter().map(|w| Warning {
                message: format!("{origin}: {}", w.message),
                ..w
            }));
        self.result = match (self.result.take(), outcome.result) {
            (Some(ProfileResult::Verify(run)), Some(ProfileResult::Verify(job))) => Some(
                ProfileResult::Verify(crate::verify::writes::combine(Some(run), job)),
            ),
            (run, job) => job.or(run),
        };
        self.interrupted |= outcome.interrupted;
    }
}

#[cfg(test)]
mod tests;
