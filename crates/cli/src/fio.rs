//! fio's habits on `iomark disk`: `--output-format`, `--direct=0|1`, and
//! job files (`--job FILE`, `iomark fio FILE`), run one job after another
//! and stored as one run. The job file's format and checks live in
//! [`iomark_disk::fio_job`], fio's JSON layout in [`iomark_text::fio_json`];
//! this module reads the file, runs the plans and prints.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Context};
use clap::Args;
use iomark_disk::fio_job::{self, FioJob};
use iomark_disk::plan::{run_document, DiskOutcome, DiskPlan};
use iomark_disk::target::{OpenTarget, TargetRequest};
use iomark_host::cgroup::SelfLimit;
use iomark_model::profile::ProfileResult;
use iomark_model::{now_ms, RunBody};

use crate::disk::{open_target, ProfileProgress};
use crate::disk_args::{print_run, DiskArgs};
use crate::exit::Exit;
use crate::known::Known;
use crate::signals;

/// `iomark fio FILE [PATH]`: `iomark disk --job FILE [PATH]`.
#[derive(Debug, Args)]
pub struct FioArgs {
    /// The fio job file.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub disk: DiskArgs,
}

/// Run `iomark fio`.
pub fn run(mut args: FioArgs) -> anyhow::Result<Exit> {
    args.disk.store.check()?;
    let file = args.file.clone();
    args.disk.job = Some(file.clone());
    run_job_file(&args.disk, &file)
}

/// `iomark disk --job FILE`: the checks `iomark disk` makes first, then
/// the job file.
pub fn run_disk_job(args: &DiskArgs, file: &Path) -> anyhow::Result<Exit> {
    args.cluster.check_alone()?;
    args.store.check()?;
    run_job_file(args, file)
}

/// Refuse what a job file sets itself: workload flags and profiles.
fn check_flags(args: &DiskArgs) -> anyhow::Result<()> {
    let mut given = args.settings().job.given();
    if args.size.is_some() {
        given.push("--size");
    }
    if args.direct.is_some() || args.buffered {
        given.push("--direct/--buffered");
    }
    if let Some(flag) = given.first() {
        bail!("{flag} cannot be combined with --job: set it in the job file instead");
    }
    if args.prof.profile.is_some() {
        bail!("--profile cannot be combined with --job: run one of them");
    }
    Ok(())
}

/// Run every job of a fio job file, one after another, as one stored run.
pub fn run_job_file(args: &DiskArgs, file: &Path) -> anyhow::Result<Exit> {
    check_flags(args)?;
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read job file {}", file.display()))?;
    let parsed = fio_job::parse(&text).with_context(|| file.display().to_string())?;
    // Every job checked before anything is opened or written.
    let mut plans = parsed
        .jobs
        .iter()
        .map(|j| j.plan(args.path_given(), &args.allow_write))
        .collect::<Result<Vec<DiskPlan>, _>>()
        .with_context(|| file.display().to_string())?;
    // --repeat runs each job of the file that many times.
    let repeat = args.repeat.unwrap_or(1);
    if let Some((j, _)) = parsed
        .jobs
        .iter()
        .zip(&plans)
        .find(|(_, p)| repeat > 1 && p.verify.is_some())
    {
        bail!(
            "job [{}] has verify=, which checks one run's writes: drop --repeat or verify=",
            j.name
        );
    }
    plans.iter_mut().for_each(|p| p.repeat = repeat);
    let first = &plans[0].request.path;
    if let Some((j, p)) = parsed
        .jobs
        .iter()
        .zip(&plans)
        .find(|(_, p)| &p.request.path != first)
    {
        bail!(
            "{}: job [{}] (line {}) runs on {}, the first job on {}: iomark stores one target \
             per run; give PATH to run every job on one, or split the file",
            file.display(),
            j.name,
            j.line,
            p.request.path.display(),
            first.display()
        );
    }
    say_notes(&parsed);
    let limit = args.mem_limit.map(SelfLimit::enter).transpose()?;
    let stop = signals::stop_flag()?;
    let started_at_ms = now_ms();
    let mut run = JobFileRun::default();
    for (job, plan) in parsed.jobs.iter().zip(&plans) {
        if !run.one(args, job, plan, stop, started_at_ms)? {
            break;
        }
    }
    // Ctrl-C while a later test file was made: the jobs before it are in
    // the store already (ProfileObserver::finished).
    let (Some((_, target)), Some((mut obs, known))) = (run.open.take(), run.obs.take()) else {
        return Ok(Exit::Interrupted);
    };
    if let Some(line) = obs.line.take() {
        line.finish();
    }
    run.outcome
        .warnings
        .extend(known.warnings(&run.outcome.jobs));
    let interrupted = run.outcome.interrupted;
    // fio exits non-zero when its verify fails; so does a job file's run.
    let verify_failed = matches!(
        &run.outcome.result,
        Some(ProfileResult::Verify(v)) if v.failed()
    );
    let mut doc = run_document(
        &target,
        PROFILE,
        run.outcome,
        started_at_ms,
        crate::record::command_line(),
    );
    drop(target);
    if let (RunBody::Disk(d), Some(limit)) = (&mut doc.body, &limit) {
        d.cgroup = Some(Box::new(limit.usage()));
    }
    args.store.apply(&mut doc);
    obs.recorder.finish(&doc);
    print_run(args, &doc, false)?;
    Ok(Exit::of_disk_run(interrupted, verify_failed))
}

/// The profile name a job file's run is stored under.
const PROFILE: &str = "fio-job";

/// What a job file's run holds between jobs.
#[derive(Default)]
struct JobFileRun {
    /// The open target and the request it was opened for.
    open: Option<(TargetRequest, OpenTarget)>,
    /// Progress and the store, once the first target is open.
    obs: Option<(ProfileProgress, Known)>,
    /// Every job so far.
    outcome: DiskOutcome,
}

impl JobFileRun {
    /// Run one job; `false` when Ctrl-C ended the run.
    fn one(
        &mut self,
        args: &DiskArgs,
        job: &FioJob,
        plan: &DiskPlan,
        stop: &AtomicBool,
        started_at_ms: u64,
    ) -> anyhow::Result<bool> {
        // The next job reuses the target when it asks for the same one, as
        // fio reuses a job's file: a test file is not made and filled again.
        let reuse = self
            .open
            .as_ref()
            .is_some_and(|(req, _)| same_target(req, &plan.request));
        if !reuse {
            // The old test file goes before the new one is made, so a file
            // of several test files never needs the space of two.
            self.open = None;
            let Some(t) = open_target(&plan.request, stop)? else {
                self.outcome.interrupted = true;
                return Ok(false);
            };
            self.open = Some((plan.request.clone(), t));
        }
        let (_, target) = self.open.as_ref().expect("opened above");
        let workload = &plan.workload;
        let at = || {
            format!(
                "job [{}] (line {}): {}",
                job.name,
                job.line,
                workload.describe()
            )
        };
        workload.check_target(target).with_context(at)?;
        if !job.keep_cache && !args.keep_cache {
            target.invalidate_cache();
        }
        if self.obs.is_none() {
            let mut partial = run_document(
                target,
                PROFILE,
                DiskOutcome::default(),
                started_at_ms,
                crate::record::command_line(),
            );
            let mut recorder = crate::record::Recorder::begin(&args.store, &mut partial);
            let known = Known::recall(
                &mut recorder,
                partial.device.as_ref(),
                target.direct,
                args.rated.clone(),
            );
            let obs = ProfileProgress {
                line: None,
                recorder,
                partial,
            };
            self.obs = Some((obs, known));
        }
        let (obs, _) = self.obs.as_mut().expect("made above");
        // Each job is a run of its own on the progress line.
        obs.follow(
            workload.outline(target).repeated(plan.repeat),
            crate::progress::wanted(args.quiet),
            "",
            None,
        );
        // A job with verify= is checked before the next job writes.
        let o = workload
            .run_repeated(target, stop, obs, plan.verify, plan.repeat)
            .with_context(|| format!("{} on {}", at(), target.info.path))?;
        let interrupted = o.interrupted;
        job.add_outcome(&mut self.outcome, o);
        iomark_disk::profiles::ProfileObserver::finished(obs, &self.outcome.jobs);
        Ok(!interrupted)
    }
}

/// Whether a job can run on the target opened for another's request.
fn same_target(a: &TargetRequest, b: &TargetRequest) -> bool {
    a.path == b.path
        && a.size == b.size
        && a.direct == b.direct
        && (a.write || !b.write)
        && a.data == b.data
}

/// Say once where iomark runs the file differently from fio.
fn say_notes(parsed: &fio_job::FioJobFile) {
    let mut said: Vec<&str> = Vec::new();
    for j in &parsed.jobs {
        for n in &j.notes {
            if !said.contains(&n.as_str()) {
                eprintln!("iomark: note: {n}");
                said.push(n);
            }
        }
    }
    let together = parsed.concurrent_in_fio();
    if !together.is_empty() {
        // Named up to a few: a file of thousands of jobs gets one line.
        const NAMED: usize = 5;
        let mut names = together[..together.len().min(NAMED)].join(", ");
        if together.len() > NAMED {
            names.push_str(&format!(" and {} more", together.len() - NAMED));
        }
        eprintln!(
            "iomark: note: fio would start {} together with the job before (no stonewall); \
             iomark runs one job at a time, each on its own",
            iomark_text::escape_controls(&names)
        );
    }
}
