//! What `iomark disk` runs: a custom job or a classic profile, checked as a
//! whole before anything is opened, then run on its target and written up
//! as a result document.
//!
//! A run is custom when any workload setting is given and no profile is
//! named; otherwise it is a profile (CrystalDiskMark 8's by default).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use iomark_model::artefact::ProbeVerdict;
use iomark_model::device::HostInfo;
use iomark_model::disk::{DiskJobResult, DiskJobSpec, DiskRun, DiskTarget};
use iomark_model::profile::ProfileResult;
use iomark_model::units::Bytes;
use iomark_model::verify::VerifyPhase;
use iomark_model::{RunBody, RunDocument, RunStatus, Warning};

use crate::checks;
use crate::job::JobSettings;
use crate::profiles::{self, ProfileName, ProfileObserver, ProfilePlan, ProfileSettings, Setting};
use crate::target::{DirectMode, OpenTarget, TargetRequest, TestFilePrep};
use crate::verify::writes::VerifyWrites;
use crate::DiskError;
use iomark_pipeline::Outline;

/// Everything the user said about a disk run.
#[derive(Debug, Clone, Default)]
pub struct DiskSettings {
    /// A directory for a test file, an existing file, or a block device.
    pub path: PathBuf,
    /// The workload settings (fio's vocabulary).
    pub job: JobSettings,
    /// The profile named, if any.
    pub profile: Option<ProfileName>,
    /// The profile settings; the ones a job has too (runtime, ramp,
    /// engine, data, seed) are taken from [`job`](Self::job).
    pub profile_settings: ProfileSettings,
    /// Existing files and devices the user allowed writes to.
    pub allow_write: Vec<PathBuf>,
    /// `--repeat N`: run a custom job N times, stored as one with the runs'
    /// spread (0 and 1: once).
    pub repeat: u32,
}

/// What runs: one custom job, or a profile's plan.
#[derive(Debug, Clone)]
pub enum Workload {
    /// A job with fio's vocabulary; its size and direct flag are the
    /// target's, filled in once it is open.
    Custom(DiskJobSpec),
    /// A custom job given several depths: run once at each, in order.
    Depths(Vec<DiskJobSpec>),
    /// A classic profile.
    Profile(ProfileName, ProfilePlan),
}

/// A checked run: the workload and how its target is to be opened.
#[derive(Debug, Clone)]
pub struct DiskPlan {
    /// What runs.
    pub workload: Workload,
    /// Where it runs.
    pub request: TargetRequest,
    /// `--verify` on a custom write run.
    pub(crate) verify: Option<VerifyWrites>,
    /// How many times a custom job runs (at least 1).
    pub(crate) repeat: u32,
}

/// What a run measured; the default is a run that measured nothing yet.
#[derive(Debug, Default)]
pub struct DiskOutcome {
    /// Every measured job, in order.
    pub jobs: Vec<DiskJobResult>,
    /// A profile's statistic and series.
    pub result: Option<ProfileResult>,
    /// Doubts about the figures.
    pub warnings: Vec<Warning>,
    /// Whether Ctrl-C ended the run early (or, in a document written
    /// before the end, may still end it).
    pub interrupted: bool,
    /// The short artefacts probe's verdict, when one ran before the
    /// profile.
    pub probe: Option<ProbeVerdict>,
}

impl DiskSettings {
    /// Whether this is a custom job: a workload setting given, no profile
    /// named.
    fn is_custom(&self) -> bool {
        self.profile.is_none() && !self.job.given().is_empty()
    }

    /// Check everything that can be checked before the target is opened.
    pub fn build(self) -> Result<DiskPlan, DiskError> {
        let repeat = self.repeat.max(1);
        if repeat > 1 && !self.is_custom() {
            return Err(DiskError::Invalid(
                "--repeat runs a custom job (--rw, --bs, ...) several times; a profile has \
                 --passes: drop --repeat or give the job's settings"
                    .into(),
            ));
        }
        if repeat > crate::repeat::MAX_REPEAT {
            return Err(DiskError::Invalid(format!(
                "--repeat {repeat} is more than {}: try --repeat 5",
                crate::repeat::MAX_REPEAT
            )));
        }
        if self.is_custom() {
            let job = self.job.build()?;
            let request = TargetRequest {
                path: self.path,
                size: job.size,
                default_size: Bytes(Bytes::GIB),
                write: job.spec.rw.writes(),
                allow_write: self.allow_write,
                direct: job.direct,
                data: job.spec.data,
                seed: job.spec.seed,
                io_sizes: vec![job.spec.bs],
                prep: TestFilePrep::Filled,
            };
            if repeat > 1 && job.verify.is_some() {
                return Err(DiskError::Invalid(
                    "--verify checks one run's writes: drop --repeat or --verify".into(),
                ));
            }
            if job.depth_sweep.len() > 1 && job.verify.is_some() {
                return Err(DiskError::Invalid(
                    "--verify checks one job's writes: give --iodepth one depth, not a list".into(),
                ));
            }
            let workload = if job.depth_sweep.len() > 1 {
                Workload::Depths(
                    job.depth_sweep
                        .iter()
                        .map(|&depth| DiskJobSpec {
                            name: format!("custom QD{depth}"),
                            iodepth: depth,
                            iodepth_batch: job.spec.iodepth_batch.min(depth),
                            ..job.spec.clone()
                        })
                        .collect(),
                )
            } else {
                Workload::Custom(job.spec)
            };
            return Ok(DiskPlan {
                workload,
                request,
                verify: job.verify,
                repeat,
            });
        }
        let name = self.profile.unwrap_or(ProfileName::Cdm);
        // Workload settings that are no profile's setting too (--runtime,
        // --ramp and --engine are) make a custom job.
        let is_setting = |f: &&str| Setting::ALL.iter().any(|s| s.flag() == *f);
        if let Some(flag) = self.job.given().into_iter().find(|f| !is_setting(f)) {
            return Err(DiskError::Invalid(format!(
                "{flag} sets a custom workload and cannot be combined with --profile {name}: drop one of them"
            )));
        }
        let job = &self.job;
        let settings = ProfileSettings {
            runtime: job.runtime,
            ramp: job.ramp,
            engine: job.engine_kind(),
            data: job.data,
            seed: job.seed,
            ..self.profile_settings.clone()
        };
        let plan = profiles::plan(name, &settings)?;
        if self.job.size == Some(Bytes(0)) {
            return Err(DiskError::Invalid(
                "--size must be larger than 0: try --size 1GiB".into(),
            ));
        }
        let (path, size) = match &plan {
            // A read phase on a directory reads the file a write phase
            // kept there.
            ProfilePlan::Verify(o) if o.phase == VerifyPhase::Read && self.path.is_dir() => {
                (crate::target::find_kept_verify_file(&self.path)?, None)
            }
            _ => (self.path, self.job.size),
        };
        let request = TargetRequest {
            path,
            size,
            default_size: plan.default_size(),
            write: plan.writes(),
            allow_write: self.allow_write,
            direct: DirectMode::from_choice(self.job.direct_choice()),
            data: self.job.data,
            seed: self.job.seed,
            io_sizes: plan.io_sizes(),
            prep: plan.test_file_prep(),
        };
        Ok(DiskPlan {
            workload: Workload::Profile(name, plan),
            request,
            verify: None,
            repeat: 1,
        })
    }
}

impl Workload {
    /// The name stored with the run: `custom` or the profile's.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Workload::Custom(_) | Workload::Depths(_) => "custom",
            Workload::Profile(name, _) => name.as_str(),
        }
    }

    /// What is running, for an error's context.
    pub(crate) fn describe(&self) -> String {
        match self {
            Workload::Custom(s) => format!(
                "{} bs={} iodepth={} numjobs={} engine={}",
                s.rw, s.bs, s.iodepth, s.numjobs, s.engine
            ),
            Workload::Depths(specs) => match specs.first() {
                Some(s) => format!(
                    "{} bs={} iodepth={} numjobs={} engine={}",
                    s.rw,
                    s.bs,
                    specs
                        .iter()
                        .map(|s| s.iodepth.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
                    s.numjobs,
                    s.engine
                ),
                None => "custom".into(),
            },
            Workload::Profile(name, _) => format!("profile {name}"),
        }
    }

    /// A custom job as it runs on `target`: with the target's size and
    /// direct flag, checked against the target.
    fn custom_on(spec: &DiskJobSpec, target: &OpenTarget) -> Result<DiskJobSpec, DiskError> {
        let mut spec = spec.clone();
        spec.size = target.info.size;
        spec.direct = target.bypasses_cache(spec.engine);
        crate::validate_job(&spec, target)?;
        Ok(spec)
    }

    /// Check the workload against its open target (a custom job's block
    /// size against the device's, for one), before anything is measured.
    pub(crate) fn check_target(&self, target: &OpenTarget) -> Result<(), DiskError> {
        match self {
            Workload::Custom(spec) => Self::custom_on(spec, target).map(drop),
            Workload::Depths(specs) => specs
                .iter()
                .try_for_each(|s| Self::custom_on(s, target).map(drop)),
            // Each profile's sizes were checked when the target was opened
            // (TargetRequest::io_sizes).
            Workload::Profile(..) => Ok(()),
        }
    }

    /// The steps the workload runs on `target`, in order, for progress
    /// (a custom job is one test).
    pub(crate) fn outline(&self, target: &OpenTarget) -> Outline {
        match self {
            Workload::Custom(spec) => Self::custom_on(spec, target)
                .map(|s| Outline::job(&s))
                .unwrap_or_default(),
            Workload::Depths(specs) => {
                let jobs = specs.iter().map(|s| Self::custom_on(s, target));
                Outline::jobs(jobs.flatten())
            }
            Workload::Profile(_, plan) => plan.outline(target.info.size),
        }
    }

    /// Run as [`run_verified`](Self::run_verified) does, `repeat` times
    /// (`--repeat`; a custom job, without `verify`): each job's figures are
    /// those of its median run by throughput, with every run's figures in
    /// its `repeats`, so a gate judges against the runs' spread.
    pub(crate) fn run_repeated(
        &self,
        target: &OpenTarget,
        stop: &AtomicBool,
        obs: &mut dyn ProfileObserver,
        verify: Option<VerifyWrites>,
        repeat: u32,
    ) -> Result<DiskOutcome, DiskError> {
        if repeat <= 1 {
            return self.run_verified(target, stop, obs, verify);
        }
        let mut runs: Vec<DiskOutcome> = Vec::new();
        for _ in 0..repeat {
            let run = self.run_verified(target, stop, obs, None)?;
            let interrupted = run.interrupted;
            runs.push(run);
            if interrupted || stop.load(std::sync::atomic::Ordering::Relaxed) {
                break;
            }
        }
        let interrupted = runs.iter().any(|r| r.interrupted);
        let mut warnings: Vec<Warning> = Vec::new();
        for w in runs.iter().flat_map(|r| r.warnings.iter()) {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
        Ok(DiskOutcome {
            jobs: crate::repeat::median_jobs(runs.into_iter().map(|r| r.jobs).collect()),
            result: None,
            warnings,
            interrupted,
            probe: None,
        })
    }

    /// Run as [`run`](Self::run) does; with `verify`, a custom job's
    /// writes are stamped and, after the run, read back and checked
    /// (crate::verify::writes): the check is the outcome's verify result,
    /// a bad block a `data_errors` warning.
    fn run_verified(
        &self,
        target: &OpenTarget,
        stop: &AtomicBool,
        obs: &mut dyn ProfileObserver,
        verify: Option<VerifyWrites>,
    ) -> Result<DiskOutcome, DiskError> {
        match self {
            Workload::Custom(spec) => {
                let spec = Self::custom_on(spec, target)?;
                let ledger = verify.map(|_| {
                    crate::verify::writes::WriteLedger::new(
                        spec.bs,
                        spec.size.get().min(target.info.size.get()) / spec.bs.get(),
                    )
                });
                obs.begin(&spec.name);
                let job = crate::runner::run_job_stamped(&spec, target, stop, obs, ledger.as_ref());
                obs.end();
                let job = job?;
                let mut outcome = DiskOutcome {
                    interrupted: job.interrupted,
                    jobs: vec![job],
                    ..DiskOutcome::default()
                };
                if let (Some(v), Some(ledger), false) = (verify, &ledger, outcome.interrupted) {
                    let align = target.info.logical_block_size as usize;
                    obs.begin("verify");
                    let check = ledger.check(&target.file, target.region_base, align, stop);
                    obs.end();
                    let check = check?;
                    outcome.interrupted = check.partial;
                    let (result, warnings) = check.into_result(
                        ledger,
                        &spec,
                        target.bypasses_cache(spec.engine),
                        v.timed,
                    );
                    outcome.result = Some(ProfileResult::Verify(result));
                    outcome.warnings = warnings;
                }
                Ok(outcome)
            }
            Workload::Depths(specs) => {
                let mut outcome = DiskOutcome::default();
                for spec in specs {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        outcome.interrupted = true;
                        break;
                    }
                    let spec = Self::custom_on(spec, target)?;
                    obs.begin(&spec.name);
                    let job = crate::runner::run_job(&spec, target, stop, obs);
                    obs.end();
                    let job = job?;
                    outcome.interrupted |= job.interrupted;
                    outcome.jobs.push(job);
                }
                Ok(outcome)
            }
            Workload::Profile(_, plan) => {
                let o = plan.run(target, stop, obs);
                obs.end();
                let mut o = o?;
                // A profile's figures are its statistics; its jobs' bins
                // (fio's json+) would only bloat the stored document.
                let dirs = o.jobs.iter_mut().flat_map(|j| [&mut j.read, &mut j.write]);
                for d in dirs.flatten() {
                    d.clat.bins = Vec::new();
                }
                Ok(DiskOutcome {
                    jobs: o.jobs,
                    result: Some(o.result),
                    warnings: o.warnings,
                    interrupted: o.interrupted,
                    probe: None,
                })
            }
        }
    }
}

/// The result document of a disk run on the target `info` describes, with
/// its doubts `target_warnings`: the target's and the run's warnings, each
/// rate checked against the ceiling of the links the device sits behind
/// and for the signs of a cache ([`crate::checks`]), the knee of each
/// depth sweep ([`crate::knee`]), the host and the device chain.
pub(crate) fn run_document_for(
    info: &DiskTarget,
    target_warnings: &[Warning],
    workload: &'static str,
    outcome: DiskOutcome,
    started_at_ms: u64,
    command_line: Vec<String>,
) -> RunDocument {
    let chain = iomark_host::DeviceChain::for_path(&info.path).ok();
    let mut warnings: Vec<Warning> = target_warnings.to_vec();
    warnings.extend(outcome.warnings);
    if let Some(chain) = &chain {
        for (what, rate) in checks::shown_rates(outcome.result.as_ref(), &outcome.jobs) {
            warnings.extend(iomark_host::check_ceiling(chain, rate, &what));
        }
        warnings.extend(checks::reads_above_writes(chain.report(), &outcome.jobs));
        warnings.extend(checks::cache_on_route(chain.report(), &outcome.jobs));
    }
    warnings.extend(checks::warmed_within_jobs(&outcome.jobs));
    warnings.extend(checks::suspicious::no_io(&outcome.jobs));
    warnings.extend(checks::suspicious::wide_spread(
        outcome.result.as_ref(),
        &outcome.jobs,
    ));
    warnings.extend(checks::warmed_passes(
        outcome.result.as_ref(),
        &outcome.jobs,
    ));
    let knees = crate::knee::sweep_knees(
        outcome.result.as_ref(),
        &outcome.jobs,
        chain.as_ref().map(iomark_host::DeviceChain::report),
        iomark_stats::knee::DEFAULT_GAIN_PCT,
    );
    let body = RunBody::Disk(DiskRun {
        rounds_so_far: Vec::new(),
        profile: workload.into(),
        target: info.clone(),
        jobs: outcome.jobs,
        profile_result: outcome.result,
        cgroup: None,
        probe: outcome.probe,
        knees,
        cluster: None,
    });
    RunDocument {
        started_at_ms,
        status: if outcome.interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        },
        warnings,
        host: Some(<HostInfo as iomark_host::HostInfoExt>::collect()),
        device: chain.map(iomark_host::DeviceChain::into_report),
        ..RunDocument::iomark(command_line, body)
    }
}
