//! `iomark disk`: a classic profile (CrystalDiskMark 8 by default, see
//! docs/profiles.md) or a storage job with fio's vocabulary, on a test file,
//! an existing file or a block device.
//!
//! This module runs it (open, record, probe, run, check, store, print);
//! the arguments are in `disk_args`, the job's defaults and checks in
//! [`iomark_disk::job`], each profile's in its module of
//! [`iomark_disk::profiles`]. A job file (`--job`) runs in `fio`.

use anyhow::Context;
use iomark_disk::plan::{run_document, DiskOutcome, Workload};
use iomark_disk::profiles::artefacts::ArtefactsOptions;
use iomark_disk::profiles::outline::{Eta, Outline, Tracker};
use iomark_disk::profiles::{ProfileObserver, ProfilePlan};
use iomark_disk::target::{OpenTarget, TargetRequest};
use iomark_disk::{runner, DiskError};
use iomark_host::cgroup::SelfLimit;
use iomark_model::artefact::ProbeVerdict;
use iomark_model::disk::{DiskJobResult, EngineKind};
use iomark_model::profile::ProfileResult;
use iomark_model::{now_ms, RunBody, RunDocument};

use crate::disk_args::{print_run, DiskArgs};
use crate::exit::Exit;
use crate::known::Known;
use crate::{progress, signals};

/// The progress line of the run (and of the probe before it); each
/// finished test is written to the store, so a killed run keeps what it
/// measured.
pub(crate) struct ProfileProgress {
    pub(crate) line: Option<progress::RunProgress>,
    pub(crate) recorder: crate::record::Recorder,
    pub(crate) partial: RunDocument,
}

impl runner::Observer for ProfileProgress {
    fn progress(&mut self, p: &runner::Progress) {
        if let Some(line) = &mut self.line {
            line.progress(p);
        }
    }
}

impl ProfileObserver for ProfileProgress {
    fn begin(&mut self, label: &str) {
        if let Some(line) = &mut self.line {
            line.begin(label);
        }
    }

    fn end(&mut self) {
        if let Some(line) = &mut self.line {
            line.end();
        }
    }

    fn finished(&mut self, jobs: &[DiskJobResult]) {
        // Copied only when stored: after every job, that was quadratic.
        if !self.recorder.checkpoint_due() {
            return;
        }
        if let RunBody::Disk(run) = &mut self.partial.body {
            run.jobs = jobs.to_vec();
        }
        self.recorder.update(&self.partial);
    }
}

impl ProfileProgress {
    /// Follow `outline` from here on, the line cleared between runs.
    pub(crate) fn follow(
        &mut self,
        outline: Outline,
        show: bool,
        prefix: &'static str,
        then: Option<Eta>,
    ) {
        if let Some(line) = self.line.take() {
            line.finish();
        }
        let tracker = Tracker::new(outline);
        self.line = Some(progress::RunProgress::new(tracker, show, prefix, then));
    }
}

/// The short probe's progress, shown as a profile's; its jobs are not the
/// run's, so they are not stored as the run's finished tests.
struct ProbeProgress<'a>(&'a mut ProfileProgress);

impl runner::Observer for ProbeProgress<'_> {
    fn progress(&mut self, p: &runner::Progress) {
        self.0.progress(p);
    }
}

impl ProfileObserver for ProbeProgress<'_> {
    fn begin(&mut self, label: &str) {
        self.0.begin(label);
    }

    fn end(&mut self) {
        self.0.end();
    }
}

/// Run `iomark disk`: a custom workload when a workload flag is given,
/// otherwise a profile (cdm by default).
pub fn run(args: DiskArgs) -> anyhow::Result<Exit> {
    args.cluster.check_alone()?;
    args.store.check()?;
    if let Some(note) = args.engine.and_then(|e| e.note) {
        eprintln!("iomark: note: {note}");
    }
    let plan = args.settings().build()?;
    let limit = args.mem_limit.map(SelfLimit::enter).transpose()?;
    let stop = signals::stop_flag()?;
    let started_at_ms = now_ms();
    let Some(mut target) = open_target(&plan.request, stop)? else {
        return Ok(Exit::Interrupted);
    };
    let workload = &plan.workload;
    workload.check_target(&target)?;
    if !args.keep_cache {
        target.invalidate_cache();
    }
    // Recorded as soon as the target is open, so a run that is killed
    // reads back as interrupted; finish() replaces it with the result.
    let name = workload.name();
    let mut partial = run_document(
        &target,
        name,
        DiskOutcome::default(),
        started_at_ms,
        crate::record::command_line(),
    );
    let mut recorder = crate::record::Recorder::begin(&args.store, &mut partial);
    let mut known = Known::recall(
        &mut recorder,
        partial.device.as_ref(),
        target.direct,
        args.rated.clone(),
    );
    let mut obs = ProfileProgress {
        line: None,
        recorder,
        partial,
    };
    let show = progress::wanted(args.quiet);
    let outline = workload.outline(&target).repeated(plan.repeat);
    let probe = match known.probe() {
        Some(remembered) => Some(remembered.clone()),
        None if args.probes_first(workload) && target.writable => {
            // The time left counts the profile that follows the probe.
            let then = Tracker::new(outline.clone()).left();
            let verdict = short_probe(&args, &target, stop, &mut obs, show, then)?;
            if let Some(v) = &verdict {
                known.learned(&mut obs.recorder, v.clone());
            }
            verdict
        }
        None => None,
    };
    obs.follow(outline, show, "", None);
    let mut outcome = workload
        .run_repeated(&target, stop, &mut obs, plan.verify, plan.repeat)
        .with_context(|| format!("{} on {}", workload.describe(), target.info.path))?;
    outcome.probe = probe;
    known.after_run(&mut obs.recorder, &mut outcome);
    if let Some(line) = obs.line.take() {
        line.finish();
    }
    if let Some(ProfileResult::Verify(v)) = &outcome.result {
        crate::verify::after(&args, v, &mut target, outcome.interrupted)?;
    }
    let interrupted = outcome.interrupted;
    // fio exits non-zero when its verify fails; so do a --verify run and
    // the verify profile (bad blocks, or a smaller real size).
    let verify_failed = matches!(&outcome.result, Some(ProfileResult::Verify(v)) if v.failed());
    let mut doc = run_document(
        &target,
        name,
        outcome,
        started_at_ms,
        crate::record::command_line(),
    );
    drop(target);
    if let (RunBody::Disk(run), Some(limit)) = (&mut doc.body, &limit) {
        run.cgroup = Some(Box::new(limit.usage()));
    }
    args.store.apply(&mut doc);
    obs.recorder.finish(&doc);

    // -v shows a profile's spread and series; a custom job has none.
    let verbose = args.prof.verbose && matches!(workload, Workload::Profile(..));
    print_run(&args, &doc, verbose)?;
    Ok(Exit::of_disk_run(interrupted, verify_failed))
}

impl DiskArgs {
    /// Whether the short artefacts probe runs first: before the default
    /// profile (no --profile, no workload flag), unless --no-probe.
    fn probes_first(&self, workload: &Workload) -> bool {
        !self.prof.no_probe
            && self.prof.profile.is_none()
            && matches!(workload, Workload::Profile(..))
    }
}

/// The short artefacts probe on the region the profile will use; its
/// verdict, none when Ctrl-C cut it short.
fn short_probe(
    args: &DiskArgs,
    target: &OpenTarget,
    stop: &std::sync::atomic::AtomicBool,
    obs: &mut ProfileProgress,
    show: bool,
    then: Eta,
) -> anyhow::Result<Option<ProbeVerdict>> {
    let engine = args.engine.map_or(EngineKind::IoUring, |e| e.kind);
    let opts = ArtefactsOptions::short(engine, args.seed);
    let plan = ProfilePlan::Artefacts(opts);
    obs.follow(plan.outline(target.info.size), show, "probe ", Some(then));
    let outcome = plan
        .run(target, stop, &mut ProbeProgress(obs))
        .with_context(|| format!("artefacts probe on {}", target.info.path))?;
    obs.end();
    Ok(match outcome.result {
        ProfileResult::Artefacts(a) => a.verdict,
        _ => None,
    })
}

/// Open the target (creating and filling a test file), saying which stale
/// files were removed; `None` when Ctrl-C came first.
pub(crate) fn open_target(
    request: &TargetRequest,
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<Option<OpenTarget>> {
    let target = match OpenTarget::open(request, stop) {
        Ok(t) => t,
        Err(DiskError::Interrupted) => {
            eprintln!("iomark: interrupted before measuring; the test file was removed");
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    for p in &target.removed_stale {
        eprintln!("iomark: removed {} left by a killed run", p.display());
    }
    Ok(Some(target))
}
