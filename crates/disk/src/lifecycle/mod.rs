//! A disk run from its plan to its stored document, written once for
//! `iomark disk`, a job file and (rank 0 of) an MPI job: open the target,
//! record the run as begun, recall what is known of the device, run (the
//! short probe first when asked), check, write up, remember what the run
//! taught, finish the record.
//!
//! The record goes through the pipeline's [`RunSink`] (the binary's is
//! the results store; its tests' `MemorySink` keeps it in memory), the progress
//! through its [`RunDisplay`] (the line on a terminal is the binary's,
//! `iomark_text::terminal::ProgressLine`); printing the finished document
//! is the caller's. So the whole lifecycle runs in a unit test with the null engine, as
//! hyperfine tests its scheduler with a mock executor.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use iomark_disk::lifecycle::{self, RunOptions, RunPlan};
//! use iomark_pipeline::{MemorySink, NoDisplay};
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

mod coordinator;
mod known;
mod targets;
mod watch;

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use iomark_host::cgroup::SelfLimit;
use iomark_model::artefact::{ProbeVerdict, RatedSpeed};
use iomark_model::disk::EngineKind;
use iomark_model::profile::ProfileResult;
use iomark_model::units::Bytes;

use iomark_model::{now_ms, RunBody, RunDocument, RunStatus};

use coordinator::Alone;
pub use coordinator::{CoordinationError, Coordinator, Gathered};
use iomark_pipeline::{Outline, RunDisplay, RunSink, Tracker};
use known::Known;
pub use targets::open_target;

use crate::plan::{run_document_for, DiskOutcome, DiskPlan, DiskSettings, Workload};
use crate::profiles::ArtefactsOptions;
use crate::profiles::ProfilePlan;
use crate::target::OpenTarget;
use crate::DiskError;
use targets::{interrupted_without_target, verify_file_after, Targets};
use watch::{Checkpoints, Samples, Watch};

/// What a run runs: one plan (`iomark disk`), or a job file's plans one
/// after another, stored as one run.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The profile name the run is stored under: `custom`, a profile's,
    /// or `fio-job`.
    pub(crate) name: &'static str,
    /// The jobs, in order; at least one.
    pub(crate) jobs: Vec<RunJob>,
    /// The short artefacts probe before the first job, unless a verdict is
    /// remembered for the device (the default profile's).
    pub(crate) probe_first: Option<ArtefactsOptions>,
}

/// One job of a run.
#[derive(Debug, Clone)]
pub(crate) struct RunJob {
    /// The checked plan.
    pub(crate) plan: DiskPlan,
    /// The job keeps the page cache (a job file's `invalidate=0`).
    pub(crate) keep_cache: bool,
    /// Where a job file's job was written, to name it in messages and
    /// warnings; `None` for a run of one plan.
    pub(crate) origin: Option<JobOrigin>,
}

/// A job file's job: its `[name]` and line.
#[derive(Debug, Clone)]
pub(crate) struct JobOrigin {
    /// The section's name.
    pub(crate) name: String,
    /// The line it starts on.
    pub(crate) line: usize,
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
            probe_first: None,
        }
    }

    /// The run `iomark disk` asks for: the settings' plan, checked, with
    /// the short artefacts probe first when the default profile runs (no
    /// profile named, no workload flag) and `--no-probe` was not given.
    pub fn of_settings(settings: DiskSettings) -> Result<RunPlan, DiskError> {
        let may_probe = settings.profile.is_none() && !settings.profile_settings.no_probe;
        let seed = settings.job.seed;
        let plan = settings.build()?;
        // No workload flag, `--engine` included: the default engine.
        let probes = may_probe && matches!(plan.workload, Workload::Profile(..));
        Ok(RunPlan {
            probe_first: probes.then(|| ArtefactsOptions::short(EngineKind::IoUring, seed)),
            ..RunPlan::single(plan)
        })
    }
}

/// How the run goes, beyond its plan.
#[derive(Debug, Default)]
pub struct RunOptions {
    /// `--keep-cache`: no job drops the target's pages first.
    pub keep_cache: bool,
    /// `--rated`: the speed the device is rated at, remembered for it.
    pub rated: Option<RatedSpeed>,
    /// `--keep-verify-file`: a verify read phase leaves the kept file.
    pub keep_verify_file: bool,
    /// `--mem-limit`: the run goes into a memory cgroup of this size,
    /// entered once its plan is checked, and the group's record goes with
    /// the run.
    pub mem_limit: Option<Bytes>,
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
    /// The run measured, and another process of the job recorded it.
    Elsewhere,
    /// A stop signal ended a job of several processes before their
    /// figures were gathered: recorded as interrupted, without figures.
    Stopped,
}

/// A finished run: its document as recorded, and what the caller says.
#[derive(Debug)]
pub struct Finished {
    /// The run's document.
    pub doc: RunDocument,
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
    /// `--mem-limit`'s memory cgroup could not be made or entered.
    #[error(transparent)]
    Limit(#[from] iomark_host::cgroup::CgroupError),
    /// The processes of the job could not go on together (another rank
    /// failed), as the [`Coordinator`] says.
    #[error("{0}")]
    Coordination(CoordinationError),
}

impl RunError {
    /// The error in one line, its source after the step: what another
    /// process is told.
    pub fn message(&self) -> String {
        match self {
            RunError::In { what, source } => format!("{what}: {source}"),
            other => other.to_string(),
        }
    }
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

/// Run `plan` to its end alone, recording it through `sink` and showing it
/// on `display`: a stop signal ends it early with what it measured.
pub fn run(
    plan: &RunPlan,
    opts: &RunOptions,
    sink: &mut dyn RunSink,
    display: &mut dyn RunDisplay,
    stop: &AtomicBool,
) -> Result<RunEnd, RunError> {
    run_coordinated(plan, opts, sink, display, &mut Alone, stop)
}

/// Run what `settings` ask for ([`RunPlan::of_settings`]): `iomark
/// disk`'s run, checked here before anything is opened.
pub fn run_settings(
    settings: DiskSettings,
    opts: &RunOptions,
    sink: &mut dyn RunSink,
    display: &mut dyn RunDisplay,
    stop: &AtomicBool,
) -> Result<RunEnd, RunError> {
    run(&RunPlan::of_settings(settings)?, opts, sink, display, stop)
}

/// Run `plan` as one of the processes `coordinator` joins (alone: the
/// only one), in the steps of [`Coordinator`]'s sequence; the process that
/// [records](Coordinator::records) the run goes through `sink`.
pub fn run_coordinated(
    plan: &RunPlan,
    opts: &RunOptions,
    sink: &mut dyn RunSink,
    display: &mut dyn RunDisplay,
    coordinator: &mut dyn Coordinator,
    stop: &AtomicBool,
) -> Result<RunEnd, RunError> {
    let limit = opts.mem_limit.map(SelfLimit::enter).transpose()?;
    let started_at_ms = now_ms();
    // The run's document on `target` with `outcome`.
    let write_up = |target: &OpenTarget, outcome: DiskOutcome| {
        run_document_for(
            &target.info,
            &target.warnings,
            plan.name,
            outcome,
            started_at_ms,
            opts.command_line.clone(),
        )
    };
    let mut targets = Targets::default();
    let mut recording: Option<Recording> = None;
    let mut total = DiskOutcome::default();
    let mut fresh_probe: Option<ProbeVerdict> = None;
    let mut cluster = None;
    for (i, job) in plan.jobs.iter().enumerate() {
        let workload = &job.plan.workload;
        let name_job = |what: String| match &job.origin {
            Some(o) => format!("{o}: {what}"),
            None => what,
        };
        let opened = targets.for_job(&job.plan.request, stop, display, coordinator);
        let checked = match &opened {
            Ok(Some(target)) => match &job.origin {
                Some(_) => workload
                    .check_target(target)
                    .map_err(within(|| name_job(workload.describe()))),
                None => workload.check_target(target).map_err(RunError::from),
            },
            Ok(None) | Err(_) => Ok(()),
        };
        let status = match &opened {
            Err(e) => Err(e.to_string()),
            Ok(_) => checked.as_ref().map(drop).map_err(RunError::message),
        };
        if let Err(agreed) = coordinator.agree(status) {
            if let (true, true, Ok(Some(target))) = (
                coordinator.records(),
                coordinator.records_failed_starts(),
                &opened,
            ) {
                // Begun and dropped unfinished: recorded as failed.
                let mut doc = write_up(target, DiskOutcome::default());
                sink.begin(&mut doc);
            }
            return Err(RunError::Coordination(agreed));
        }
        let Some(target) = opened? else {
            total.interrupted = true;
            break;
        };
        checked?;
        if !job.keep_cache && !opts.keep_cache {
            target.invalidate_cache();
        }
        // Recorded as soon as the target is open, so a run that is killed
        // reads back as interrupted; finish() replaces it with the result.
        if recording.is_none() && coordinator.records() {
            let mut partial = write_up(target, DiskOutcome::default());
            sink.begin(&mut partial);
            let known = if coordinator.knows_the_device() {
                Known::recall(
                    sink,
                    partial.device.as_ref(),
                    target.direct,
                    opts.rated.clone(),
                )
            } else {
                Known::default()
            };
            recording = Some(Recording { partial, known });
        }
        let outline = workload.outline(target).repeated(job.plan.repeat);
        if let (0, Some(probe), Some(rec)) = (i, &plan.probe_first, recording.as_mut()) {
            if target.writable && rec.known.probe().is_none() {
                fresh_probe = short_probe(probe, target, &outline, stop, display)?;
                if let Some(v) = &fresh_probe {
                    rec.known.learned(sink, v.clone());
                }
            }
        }
        let mut samples = Samples::new(outline.clone());
        display.follow(outline, "test", None);
        coordinator.start(target);
        let halt = coordinator.job_stop();
        let job_stop = halt.as_deref().unwrap_or(stop);
        let outcome = {
            let mut checkpoints = recording.as_mut().map(|rec| Checkpoints {
                sink: &mut *sink,
                partial: &mut rec.partial,
            });
            let mut watch = Watch {
                display: &mut *display,
                checkpoints: checkpoints.as_mut(),
                samples: Some(&mut samples),
                coordinator: &mut *coordinator,
            };
            workload.run_repeated(
                target,
                job_stop,
                &mut watch,
                job.plan.verify,
                job.plan.repeat,
            )
        };
        let outcome = outcome.map_err(within(|| {
            format!("{} on {}", name_job(workload.describe()), target.info.path)
        }));
        let gathered = coordinator.gather(outcome, target, stop);
        // The seconds the other processes' shares completed at the end.
        watch::keep_samples(
            coordinator.samples_ready(),
            recording.is_some().then_some(&mut *sink),
            display,
        );
        let outcome = match gathered? {
            Gathered::Run {
                outcome,
                cluster: c,
            } => {
                cluster = c;
                outcome
            }
            Gathered::Elsewhere => return Ok(RunEnd::Elsewhere),
            Gathered::Stopped(warning) => {
                display.close();
                if recording.is_some() {
                    let mut doc = write_up(
                        target,
                        DiskOutcome {
                            interrupted: true,
                            ..DiskOutcome::default()
                        },
                    );
                    doc.warnings.push(warning);
                    sink.finish(&mut doc);
                }
                if let Some((_, target)) = targets.open.take() {
                    coordinator.stopped(target, display);
                }
                return Ok(RunEnd::Stopped);
            }
        };
        let interrupted = outcome.interrupted;
        match &job.origin {
            Some(o) => total.add(o, outcome),
            None => total = outcome,
        }
        if let (true, Some(rec)) = (plan.jobs.len() > 1, recording.as_mut()) {
            Checkpoints {
                sink: &mut *sink,
                partial: &mut rec.partial,
            }
            .jobs(&total.jobs);
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
        Some((_, target)) => write_up(&target, total),
        // Stopped while a later job's test file was made: the document of
        // the jobs before it, on the first target.
        None => interrupted_without_target(rec.partial, total),
    };
    let memory = doc.host.as_ref().map(|h| h.memory_total);
    if let RunBody::Disk(run) = &mut doc.body {
        run.cluster = cluster;
        if let Some(limit) = &limit {
            run.cgroup = Some(Box::new(limit.usage()));
        }
        let limit = run.cgroup.as_ref().map(|c| c.limit);
        let fits = crate::checks::fits_in_memory(&run.jobs, memory, limit);
        doc.warnings.extend(fits);
    }
    sink.finish(&mut doc);
    Ok(RunEnd::Finished(Box::new(Finished {
        doc,
        verify_failed,
        verify_file,
    })))
}

/// The short artefacts probe on the region the run will use, before it;
/// its verdict, none when a stop signal cut it short.
fn short_probe(
    probe: &ArtefactsOptions,
    target: &OpenTarget,
    outline: &Outline,
    stop: &AtomicBool,
    display: &mut dyn RunDisplay,
) -> Result<Option<ProbeVerdict>, RunError> {
    // The time left counts the run that follows the probe.
    let then = Tracker::new(outline.clone()).left();
    let plan = ProfilePlan::Artefacts(probe.clone());
    display.follow(plan.outline(target.info.size), "probe", Some(then));
    let mut watch = Watch {
        display: &mut *display,
        checkpoints: None,
        samples: None,
        coordinator: &mut Alone,
    };
    let outcome = plan.run(target, stop, &mut watch).map_err(within(|| {
        format!("artefacts probe on {}", target.info.path)
    }))?;
    display.end();
    Ok(match outcome.result {
        ProfileResult::Artefacts(a) => a.verdict,
        _ => None,
    })
}

#[cfg(test)]
mod tests;
