//! `mpirun -np N iomark disk DIR --rw write ...`: every rank opens its
//! target, all leave one barrier together and run the single-machine
//! engine, then rank 0 gathers what each did, merges it
//! ([`iomark_cluster::merge`]) and prints and stores one run with the
//! per-rank table.
//!
//! Every step that can fail on one rank (opening its target, its run) is
//! followed by a collective status ([`World::all_ok`]): the ranks stop
//! together, rank 0 names the failing rank and its message, every rank
//! removes its test file and exits 2. A rank whose job fails while the
//! others still run tells them at once ([`Notices::failed`]), so they stop
//! at their next look at their progress (every 0.1 s), not at the end of
//! their time. A rank stopped by a signal (mpirun
//! passes SIGTERM on when a rank dies or on Ctrl-C) removes its test file
//! and leaves without another collective, so nothing waits for a dead peer.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use iomark_cluster::merge::{merge, RankReport};
use iomark_cluster::{Notices, World};
use iomark_disk::plan::{run_document, DiskOutcome, Workload};
use iomark_disk::profiles::{ProfileName, ProfileObserver, ProfilePlan};
use iomark_disk::runner;
use iomark_disk::target::{OpenTarget, TargetRequest};
use iomark_disk::verify::writes::VerifyWrites;
use iomark_model::cluster::Layout;
use iomark_model::disk::TargetKind;
use iomark_model::profile::ProfileResult;
use iomark_model::units::{Bytes, Nanos};
use iomark_model::{now_ms, RunBody};

use iomark_disk::lifecycle::{Known, RunSink};

use super::decode;
use crate::disk_args::{print_run, DiskArgs};
use crate::exit::Exit;
use crate::progress::ProgressLine;
use crate::record::StoreSink;
use crate::signals;

/// Run `iomark disk` as rank `world.rank()` of the job.
pub fn run(args: DiskArgs) -> anyhow::Result<Exit> {
    let world = World::init()?;
    let stop = signals::stop_flag()?;
    let out = run_rank(&args, &world, stop);
    super::leave(&world, out)
}

/// One rank's part; errors are the job's (every rank returns one).
fn run_rank(
    args: &DiskArgs,
    world: &World,
    stop: &'static std::sync::atomic::AtomicBool,
) -> anyhow::Result<Exit> {
    let layout = args.cluster.layout();
    let checked = check(args, world);
    world.all_ok(checked.as_ref().map(drop).map_err(|e| format!("{e:#}")))?;
    let (workload, request, verify) = checked.expect("checked on every rank");
    let per_rank = request.size.unwrap_or(request.default_size);
    if world.is_root() {
        if let Some(note) = args.engine.and_then(|e| e.note) {
            eprintln!("iomark: note: {note}");
        }
    }

    let started_at_ms = now_ms();
    let opened = open(world, layout, &request, per_rank, stop);
    let opened = match opened {
        Ok(Some(t)) => Ok(t),
        Ok(None) => return Ok(Exit::Interrupted),
        Err(e) => Err(e),
    };
    let status = opened
        .as_ref()
        .map_err(|e| format!("{e:#}"))
        .and_then(|t| workload.check_target(t).map_err(|e| e.to_string()));
    if let Err(e) = world.all_ok(status) {
        if let (true, Ok(target)) = (world.is_root(), &opened) {
            // Another rank could not start: the run is stored as failed
            // (a recorder dropped unfinished), with no figures.
            let mut doc = run_document(
                target,
                workload.name(),
                DiskOutcome::default(),
                started_at_ms,
                crate::record::command_line(),
            );
            StoreSink::new(&args.store).begin(&mut doc);
        }
        return Err(e.into());
    }
    let target = opened.expect("checked on every rank");
    if !args.keep_cache {
        target.invalidate_cache();
    }

    // Rank 0 records the run now, so a job that dies reads back as
    // interrupted (or failed, when it returns an error) with what finished,
    // and recalls what the store knows of the device the ranks share (with
    // --per-rank-path each rank has its own: rank 0's is not theirs).
    let name = workload.name();
    let mut known = None;
    let mut recorder = world.is_root().then(|| {
        let mut partial = run_document(
            &target,
            name,
            DiskOutcome::default(),
            started_at_ms,
            crate::record::command_line(),
        );
        let mut recorder = StoreSink::new(&args.store);
        recorder.begin(&mut partial);
        if layout != Layout::PerRankPath {
            known = Some(Known::recall(
                &mut recorder,
                partial.device.as_ref(),
                target.direct,
                args.rated.clone(),
            ));
        }
        recorder
    });

    // The job runs against its own stop flag, raised by a signal (as
    // `stop` is), by another rank's notice that its job failed, or under
    // --stonewall by the first rank's notice that it has finished; the
    // runner stops on it as on Ctrl-C or its deadline.
    let halt = Arc::new(AtomicBool::new(false));
    let _signals_raise_halt = signals::also_raise(&halt)?;
    let stonewall = args.cluster.stonewall;
    world.barrier();
    let mut spans = Spans {
        t0: Instant::now(),
        open: None,
        spans: Vec::new(),
        notices: Some(world.notices()),
        stonewall,
        gather: None,
        signal: stop,
        halt: &halt,
        stonewalled: false,
    };
    // A profile's jobs: every rank starts each together and hands it to
    // the others as it ends (Gather), so the profile's statistics are the
    // merged jobs'.
    spans.gather = matches!(workload, Workload::Profile(..)).then(|| Gather {
        world,
        layout,
        me: RankReport {
            // Its target's doubts; the profile's are the merged jobs'.
            warnings: target.warnings.clone(),
            ..rank_report(world, &target)
        },
        pending: Vec::new(),
        kept: Vec::new(),
        failure: None,
    });
    let mut outcome = workload.run_verified(&target, &halt, &mut spans, verify);
    let mut notices = spans.notices.take().expect("taken once, here");
    if outcome.is_err() {
        // The others stop now instead of at the end of their time; the
        // message follows in the status after the run.
        notices.failed();
    }
    if stop.load(Ordering::Relaxed) {
        // No collective: the notices' receives are cancelled as they drop.
        drop(notices);
        // A signal: mpirun is ending the job (a rank died, or Ctrl-C). No
        // collective now, a peer may be gone. The test file goes with the
        // target, and a dead peer's in the same directory with it (its lock
        // died with it); rank 0 stores the run as interrupted, without
        // figures, which were never gathered.
        let dir = (target.info.kind == TargetKind::TestFile)
            .then(|| {
                std::path::Path::new(&target.info.path)
                    .parent()
                    .map(PathBuf::from)
            })
            .flatten();
        if let Some(mut r) = recorder.take() {
            let mut doc = run_document(
                &target,
                name,
                DiskOutcome {
                    interrupted: true,
                    ..DiskOutcome::default()
                },
                started_at_ms,
                crate::record::command_line(),
            );
            doc.warnings.push(iomark_model::Warning::new(
                iomark_model::WarningKind::Other,
                "the MPI job was stopped (a rank died, or Ctrl-C): the ranks' figures were not gathered",
            ));
            r.finish(&mut doc);
        }
        drop(target);
        if let Some(dir) = dir {
            for p in iomark_disk::target::remove_stale_test_files(&dir).unwrap_or_default() {
                eprintln!(
                    "iomark: rank {}: removed {} left by a killed rank",
                    world.rank(),
                    p.display()
                );
            }
        }
        return Ok(Exit::Interrupted);
    }
    let stonewalled = spans.stonewalled;
    notices.settle();
    if let (true, Ok(o)) = (stonewalled, outcome.as_mut()) {
        // Stopped by another rank's finish, not cut short: its figures
        // are what it managed in its time.
        o.interrupted = false;
        for j in &mut o.jobs {
            j.interrupted = false;
        }
    }
    let mut gather = spans.gather.take();
    if let Some(failure) = gather.as_mut().and_then(|g| g.failure.take()) {
        // Every rank learnt of it at the same job: stored as failed.
        drop(recorder.take());
        return Err(failure.into());
    }
    let status = outcome
        .as_ref()
        .map(drop)
        .map_err(|e| format!("{} on {}: {e}", workload.describe(), target.info.path));
    if let Err(e) = world.all_ok(status) {
        if let Some(r) = recorder.take() {
            // Dropped unfinished: stored as failed.
            drop(r);
        }
        return Err(e.into());
    }
    let outcome = outcome.expect("checked on every rank");
    if let Some(gather) = gather {
        let Some((merged, cluster)) = gather.finish(&outcome, stop)? else {
            return Ok(if stop.load(Ordering::Relaxed) {
                Exit::Interrupted
            } else {
                Exit::Success
            });
        };
        let recorder = recorder.expect("rank 0 records");
        let interrupted = outcome.interrupted;
        let mut outcome = outcome;
        for r in &merged {
            for w in &r.warnings {
                let w =
                    iomark_model::Warning::new(w.kind, format!("rank {}: {}", r.rank, w.message));
                if !outcome.warnings.iter().any(|o| o.kind == w.kind) {
                    outcome.warnings.push(w);
                }
            }
        }
        publish(
            args,
            &target,
            name,
            outcome,
            started_at_ms,
            cluster,
            (recorder, known),
            args.prof.verbose,
        )?;
        drop(target);
        return Ok(Exit::of_disk_run(interrupted, false));
    }

    let report = RankReport {
        spans: measured(&spans.spans, &outcome.jobs),
        jobs: outcome.jobs.clone(),
        interrupted: outcome.interrupted,
        stonewalled,
        result: outcome.result.clone(),
        warnings: outcome.warnings.clone(),
        ..rank_report(world, &target)
    };
    let bytes = serde_json::to_vec(&report).context("cannot encode this rank's result")?;
    let all = world.all_gather(&bytes);
    let Some(recorder) = recorder else {
        return Ok(Exit::Success);
    };
    let reports: Vec<RankReport> = decode(&all)?;
    let Some((jobs, cluster)) = merge(&reports, layout, stonewall) else {
        bail!("the ranks ran different jobs: run every rank with the same arguments");
    };
    let mut merged = DiskOutcome {
        jobs,
        interrupted: reports.iter().any(|r| r.interrupted),
        ..DiskOutcome::default()
    };
    for r in &reports {
        if let Some(ProfileResult::Verify(v)) = &r.result {
            let run = match merged.result.take() {
                Some(ProfileResult::Verify(run)) => Some(run),
                _ => None,
            };
            merged.result = Some(ProfileResult::Verify(iomark_disk::verify::writes::combine(
                run,
                v.clone(),
            )));
        }
        for w in &r.warnings {
            let w = iomark_model::Warning::new(w.kind, format!("rank {}: {}", r.rank, w.message));
            if !merged.warnings.iter().any(|o| o.kind == w.kind) {
                merged.warnings.push(w);
            }
        }
    }
    let verify_failed = matches!(&merged.result, Some(ProfileResult::Verify(v)) if v.failed());
    let interrupted = merged.interrupted;
    publish(
        args,
        &target,
        name,
        merged,
        started_at_ms,
        cluster,
        (recorder, known),
        false,
    )?;
    drop(target);
    Ok(Exit::of_disk_run(interrupted, verify_failed))
}

/// Rank 0: the run's document with the merged jobs and the per-rank
/// table, with what the store knows of the device (the rated speed, a
/// remembered probe or verify verdict) applied and learnt as alone,
/// stored and printed (the table under the text output).
#[allow(clippy::too_many_arguments)]
fn publish(
    args: &DiskArgs,
    target: &OpenTarget,
    name: &'static str,
    mut merged: DiskOutcome,
    started_at_ms: u64,
    cluster: iomark_model::cluster::ClusterRun,
    (mut recorder, known): (StoreSink<'_>, Option<Known>),
    verbose: bool,
) -> anyhow::Result<()> {
    if let Some(mut known) = known {
        merged.probe = known.probe().cloned();
        known.after_run(&mut recorder, &mut merged);
    }
    let mut doc = run_document(
        target,
        name,
        merged,
        started_at_ms,
        crate::record::command_line(),
    );
    if let RunBody::Disk(run) = &mut doc.body {
        run.cluster = Some(Box::new(cluster));
    }
    recorder.finish(&mut doc);
    // The text carries the rank table; fio's layout and the document do not.
    print_run(args, &doc, verbose)?;
    Ok(())
}

/// A profile's jobs across the ranks: each rank's job gathered as it ends,
/// merged for the profile ([`ProfileObserver::measured`]); rank 0 keeps
/// every rank's share of the jobs the profile keeps, for the per-rank
/// table.
struct Gather<'w> {
    world: &'w World,
    layout: Layout,
    /// This rank, without jobs.
    me: RankReport,
    /// Each rank's report of every job since the profile last kept some.
    pending: Vec<Vec<RankReport>>,
    /// Each rank's report of each job the profile kept, in order.
    kept: Vec<Vec<RankReport>>,
    /// A rank's failure, which every rank learnt at the same job.
    failure: Option<iomark_cluster::ClusterError>,
}

impl Gather<'_> {
    /// Every rank's job, merged; `span` this rank's.
    fn merge(
        &mut self,
        job: Result<iomark_model::disk::DiskJobResult, iomark_disk::DiskError>,
        span: (Nanos, Nanos),
    ) -> Result<iomark_model::disk::DiskJobResult, iomark_cluster::ClusterError> {
        self.world.all_ok(
            job.as_ref()
                .map(drop)
                .map_err(|e| format!("{e} on {}", self.me.path)),
        )?;
        let job = job.expect("checked on every rank");
        let report = RankReport {
            spans: measured(&[span], std::slice::from_ref(&job)),
            interrupted: job.interrupted,
            jobs: vec![job],
            ..self.me.clone()
        };
        // Plain data: serialising it cannot fail.
        let bytes = serde_json::to_vec(&report).unwrap_or_default();
        let reports = decode::<RankReport>(&self.world.all_gather(&bytes))?;
        let merged = merge(&reports, self.layout, false)
            .and_then(|(mut jobs, _)| jobs.pop())
            .ok_or_else(|| iomark_cluster::ClusterError::Garbled {
                rank: self.world.rank(),
                reason: "the ranks ran different jobs".into(),
            })?;
        if self.world.is_root() {
            self.pending.push(reports);
        }
        Ok(merged)
    }

    /// After the profile: rank 0's merged per-rank table (and every rank's
    /// own warnings), `None` on the other ranks or after a signal. A
    /// collective.
    fn finish(
        self,
        outcome: &DiskOutcome,
        stop: &AtomicBool,
    ) -> anyhow::Result<Option<(Vec<RankReport>, iomark_model::cluster::ClusterRun)>> {
        if !self.world.barrier_unless(stop) {
            // A signal: no collective now; rank 0's record stays unfinished.
            return Ok(None);
        }
        let mine = RankReport {
            interrupted: outcome.interrupted,
            ..self.me.clone()
        };
        let bytes = serde_json::to_vec(&mine).context("cannot encode this rank's result")?;
        let all = self.world.all_gather(&bytes);
        if !self.world.is_root() {
            return Ok(None);
        }
        let mut reports: Vec<RankReport> = decode(&all)?;
        if self.kept.len() != outcome.jobs.len() {
            bail!(
                "the profile kept {} jobs but {} were gathered across the ranks",
                outcome.jobs.len(),
                self.kept.len()
            );
        }
        for job in &self.kept {
            for (r, theirs) in reports.iter_mut().zip(job) {
                r.spans.extend_from_slice(&theirs.spans);
                r.jobs.extend(theirs.jobs.iter().cloned());
            }
        }
        let Some((_, cluster)) = merge(&reports, self.layout, false) else {
            bail!("the ranks ran different jobs: run every rank with the same arguments");
        };
        // Rank 0's target's warnings are the document's already.
        let warnings = reports.into_iter().filter(|r| r.rank != 0).collect();
        Ok(Some((warnings, cluster)))
    }
}

/// This rank and its target, with nothing run yet.
fn rank_report(world: &World, target: &OpenTarget) -> RankReport {
    RankReport {
        rank: world.rank(),
        host: world.host().to_string(),
        path: target.info.path.clone(),
        offset: target.region_base,
        spans: Vec::new(),
        jobs: Vec::new(),
        interrupted: false,
        stonewalled: false,
        device: iomark_host::DeviceChain::for_path(&target.info.path)
            .ok()
            .map(iomark_host::DeviceChain::into_report),
        result: None,
        warnings: Vec::new(),
    }
}

/// The workload (a custom one, or a profile that runs across ranks) and
/// this rank's target request, or why not.
fn check(
    args: &DiskArgs,
    world: &World,
) -> anyhow::Result<(Workload, TargetRequest, Option<VerifyWrites>)> {
    if args.job.is_some() {
        bail!(
            "--job files run alone, not across MPI ranks: use the workload flags (--rw, --bs, ...)"
        );
    }
    if world.is_root() {
        args.store.check()?;
    }
    let mut settings = args.settings();
    if let Some(path) = args.cluster.path_of(world.rank()) {
        if args.path_given().is_some() {
            bail!("--per-rank-path names every rank's path: leave out PATH");
        }
        settings.path = path;
    }
    let plan = settings.build()?;
    if plan.verify.is_some() && args.cluster.stonewall {
        bail!(
            "--stonewall with --verify: a stonewalled rank stops mid-write and its writes \
             are not read back; run --verify without --stonewall"
        );
    }
    if plan.verify.is_some() && args.verify_timed {
        bail!("--verify-timed is not merged across ranks: use --verify");
    }
    if plan.repeat > 1 {
        bail!("--repeat is not merged across ranks: run without it under mpirun, or alone");
    }
    match &plan.workload {
        Workload::Custom(spec) => {
            if args.cluster.shared_file && spec.engine.is_mapped() {
                bail!("--shared-file: a rank's region of the shared file is not mapped; use --engine psync or io_uring");
            }
        }
        Workload::Profile(name, profile) => {
            if let Err(why) = name.across_ranks() {
                bail!(
                    "--profile {name} runs alone, not across MPI ranks: {why}. Run it without \
                     mpirun, or run one of {} across ranks",
                    ProfileName::ALL
                        .into_iter()
                        .filter(|p| p.across_ranks().is_ok())
                        .map(ProfileName::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            if args.cluster.stonewall {
                bail!("--stonewall stops a custom workload (--rw ...), not a profile's jobs: leave it out");
            }
            if args.cluster.shared_file {
                if let ProfilePlan::Sweep(o) = profile {
                    if o.engines.iter().any(|e| e.is_mapped()) {
                        bail!("--shared-file: a rank's region of the shared file is not mapped; give --engines without mmap engines");
                    }
                }
            }
        }
        Workload::Depths(_) => {
            bail!("under MPI one depth runs at a time: give --iodepth a single value")
        }
    }
    if args.mem_limit.is_some() {
        bail!("--mem-limit is not applied across MPI ranks: leave it out");
    }
    if args.rated.is_some() && args.cluster.per_rank_path.is_some() {
        bail!("--rated rates one device, and with --per-rank-path each rank has a path of its own: rate the device in a run on it alone, or lay the ranks out in one directory");
    }
    Ok((plan.workload, plan.request, plan.verify))
}

/// Open `request`'s target, saying which stale files were removed; `None`
/// when a stop signal came first.
fn open_target(request: &TargetRequest, stop: &AtomicBool) -> anyhow::Result<Option<OpenTarget>> {
    Ok(iomark_disk::lifecycle::open_target(
        request,
        stop,
        &mut ProgressLine::new(false),
    )?)
}

/// This rank's target: its own test file or path, or its region of the
/// shared file rank 0 creates.
fn open(
    world: &World,
    layout: Layout,
    request: &TargetRequest,
    per_rank: Bytes,
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<Option<OpenTarget>> {
    if layout != Layout::SharedFile {
        return open_target(request, stop);
    }
    // Rank 0 creates and fills the whole file; the others open it as an
    // existing file once its path is known.
    let mut mine = if world.is_root() {
        let mut whole = request.clone();
        whole.size = Some(Bytes(per_rank.get() * u64::from(world.size())));
        Some(open_target(&whole, stop))
    } else {
        None
    };
    let path = match &mine {
        Some(Ok(Some(t))) => t.info.path.clone(),
        _ => String::new(),
    };
    let path = String::from_utf8_lossy(&world.broadcast(path.as_bytes())).into_owned();
    if path.is_empty() {
        // Rank 0 could not create it: its own error is the job's.
        return match mine.take() {
            Some(r) => r,
            None => bail!("rank 0 could not create the shared file"),
        };
    }
    let mut target = match mine.take() {
        Some(r) => r?.context("interrupted")?,
        None => {
            let mut theirs = request.clone();
            theirs.path = PathBuf::from(&path);
            theirs.size = None;
            theirs.allow_write = vec![PathBuf::from(&path)];
            match open_target(&theirs, stop)? {
                Some(t) => t,
                None => return Ok(None),
            }
        }
    };
    target.region_base = Bytes(per_rank.get() * u64::from(world.rank()));
    target.info.size = per_rank;
    // The share comes from the shared file rank 0 made at the size asked
    // for, though the other ranks open it as an existing file.
    target.info.size_from_device = false;
    Ok(Some(target))
}

/// When each job of the run started and ended, after the common start;
/// the verify check that follows a job is not in its span. Between looks
/// at the job's progress it watches for another rank's failure and, under
/// `--stonewall`, for the first rank's finish; it announces this rank's
/// own.
struct Spans<'w> {
    t0: Instant,
    open: Option<Nanos>,
    spans: Vec<(Nanos, Nanos)>,
    /// The other ranks' notices; taken when the run ends.
    notices: Option<Notices<'w>>,
    /// Whether the first rank to finish stops the others.
    stonewall: bool,
    /// A profile's jobs, gathered and merged as each ends.
    gather: Option<Gather<'w>>,
    /// Raised by a signal.
    signal: &'w AtomicBool,
    /// The job's stop flag.
    halt: &'w AtomicBool,
    /// Whether another rank's finish stopped this rank's job.
    stonewalled: bool,
}

impl Spans<'_> {
    fn now(&self) -> Nanos {
        Nanos(u64::try_from(self.t0.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
}

impl runner::Observer for Spans<'_> {
    fn progress(&mut self, _p: &runner::Progress) {
        let Some(notices) = self.notices.as_mut() else {
            return;
        };
        if self.halt.load(Ordering::Relaxed) {
            return;
        }
        if notices.peer_failed() {
            // The run is over; the failing rank's message comes in the
            // status after it.
            self.halt.store(true, Ordering::Relaxed);
        } else if self.stonewall && self.open.is_some() && notices.peer_finished() {
            self.stonewalled = true;
            self.halt.store(true, Ordering::Relaxed);
        }
    }
}

impl ProfileObserver for Spans<'_> {
    fn begin(&mut self, label: &str) {
        if label == "interval" {
            return;
        }
        if let Some(g) = &self.gather {
            // Every rank starts each of a profile's jobs together; on a
            // signal the job runs no further (its stop flag is up) and
            // measured() leaves without a collective.
            g.world.barrier_unless(self.signal);
        }
        if label != "verify" {
            self.open = Some(self.now());
        }
    }

    fn end(&mut self) {
        if let Some(start) = self.open.take() {
            let end = self.now();
            self.spans.push((start, end));
            if let (true, Some(notices)) = (self.stonewall, self.notices.as_mut()) {
                notices.finished();
            }
        }
    }

    fn finished(&mut self, jobs: &[iomark_model::disk::DiskJobResult]) {
        if let Some(g) = self.gather.as_mut() {
            // The jobs kept are the last ones measured since the profile
            // last kept some (a preparation pass before them is not).
            let new = jobs.len().saturating_sub(g.kept.len());
            let from = g.pending.len().saturating_sub(new);
            g.kept.extend(g.pending.drain(from..));
            g.pending.clear();
        }
    }

    fn measured(
        &mut self,
        job: Result<iomark_model::disk::DiskJobResult, iomark_disk::DiskError>,
    ) -> Result<iomark_model::disk::DiskJobResult, iomark_disk::DiskError> {
        let span = self.spans.last().copied().unwrap_or_default();
        let Some(g) = self.gather.as_mut() else {
            return job;
        };
        if let (Err(_), Some(notices)) = (&job, self.notices.as_mut()) {
            // The others stop their job now rather than at its end; the
            // merge below gives every rank this one's message.
            notices.failed();
        }
        // A signal: mpirun is ending the job, a peer may be gone; the
        // profile ends here without another collective step.
        if !g.world.barrier_unless(self.signal) {
            return Err(iomark_disk::DiskError::Interrupted);
        }
        g.merge(job, span).map_err(|e| {
            let message = e.to_string();
            g.failure = Some(e);
            iomark_disk::DiskError::Invalid(message)
        })
    }

    fn series(
        &mut self,
        points: Vec<iomark_model::sustained::WrittenAt>,
    ) -> Result<Vec<iomark_model::sustained::WrittenAt>, iomark_disk::DiskError> {
        let Some(g) = self.gather.as_mut() else {
            return Ok(points);
        };
        // Every rank sums the same series, so every rank finds the same
        // cliff and goes on the same way.
        if !g.world.barrier_unless(self.signal) {
            return Err(iomark_disk::DiskError::Interrupted);
        }
        let bytes = serde_json::to_vec(&points).unwrap_or_default();
        let all = g.world.all_gather(&bytes);
        match decode::<Vec<iomark_model::sustained::WrittenAt>>(&all) {
            Ok(series) => Ok(iomark_cluster::merge::merge_series(&series)),
            Err(e) => {
                let message = e.to_string();
                g.failure = Some(e);
                Err(iomark_disk::DiskError::Invalid(message))
            }
        }
    }
}

/// Each job's measured part: its span less what came before measuring
/// (threads and queues set up, the ramp), so the aggregate's window holds
/// exactly the measured bytes' time.
fn measured(
    spans: &[(Nanos, Nanos)],
    jobs: &[iomark_model::disk::DiskJobResult],
) -> Vec<(Nanos, Nanos)> {
    spans
        .iter()
        .zip(jobs)
        .map(|(&(start, end), j)| {
            let run = [j.read.as_ref(), j.write.as_ref()]
                .into_iter()
                .flatten()
                .map(|d| d.runtime.0)
                .max()
                .unwrap_or(0);
            (Nanos(start.0.max(end.0.saturating_sub(run))), end)
        })
        .collect()
}
