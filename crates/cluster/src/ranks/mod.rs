//! The runs across MPI ranks, and the one place where the ranks meet: a
//! disk run's [`Coordinator`] (here) and STREAM in step ([`mem`]).
//!
//! A disk run: every rank goes through `iomark_disk::lifecycle` as a run
//! alone does. The collectives, in the order every rank makes them:
//!
//! 1. [`open`](Coordinator::open): with `--shared-file`, rank 0 creates
//!    the file and broadcasts its path; the others open it.
//! 2. [`agree`](Coordinator::agree) (`all_ok`) on the targets: one rank's
//!    failure stops every rank with its message, and rank 0 records the
//!    run as failed.
//! 3. [`start`](Coordinator::start): a barrier, the common start of the
//!    spans.
//! 4. While a custom job runs, no collective: non-blocking notices tell
//!    the others that a rank failed (they stop at their next look at
//!    their progress, every 0.1 s) or, under `--stonewall`, that the
//!    first rank finished, and each rank posts each second of its test to
//!    rank 0, which stores the job's seconds as they come whole
//!    (`seconds`). A profile's jobs: before each, a barrier; after each,
//!    the seconds' count (`seconds`: an all-gather), an `all_ok` and an
//!    all-gather of every rank's job, merged, so the profile's statistics
//!    are the merged jobs' (`Gather`); a sustained-write series is
//!    all-gathered and summed, each rank's placed by how long after the
//!    job's barrier its job's clock started.
//! 5. [`gather`](Coordinator::gather): the notices taken (an all-gather),
//!    the seconds' count (an all-gather), an `all_ok` of the ranks'
//!    outcomes, then an all-gather of every rank's report (a custom job's
//!    jobs and spans, or a profile's per-rank table), merged on rank 0,
//!    which records and prints the run.
//!
//! STREAM ([`mem::stream`]), after the caller's `all_ok` on every rank's
//! arguments:
//!
//! 1. A barrier before the initialisation and before each kernel of each
//!    pass, outside the timed part.
//! 2. An `all_ok` of the ranks' outcomes.
//! 3. An all-gather of every rank's result, merged on rank 0, which
//!    records and prints the run.
//!
//! A stop signal (mpirun passes SIGTERM on when a rank dies, or on Ctrl-C)
//! ends a rank's part without another collective, so nothing waits for a
//! dead peer. A disk run's rank removes its test file and the stale files
//! of dead peers beside it, and rank 0 records the run as interrupted;
//! STREAM gathers nothing.

mod gather;
pub mod mem;
mod open;
mod seconds;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use iomark_disk::lifecycle::{Coordinator, Gathered, RunError};
use iomark_disk::plan::DiskOutcome;
use iomark_disk::profiles::PassSeries;
use iomark_disk::target::{OpenTarget, TargetRequest};
use iomark_disk::DiskError;
use iomark_disk::LatencyCounts;
use iomark_model::cluster::Layout;
use iomark_model::disk::{DiskJobResult, TargetKind};
use iomark_model::live::LiveSample;
use iomark_model::sustained::SummedSeries;
use iomark_model::units::Nanos;
use iomark_model::{Warning, WarningKind};
use iomark_pipeline::RunDisplay;

use crate::merge::{RankReport, RankSeries};
use crate::{ClusterError, Notices, World};
use gather::{rank_report, Gather};
use seconds::Seconds;

/// Every rank's value, from the bytes each sent (`World::all_gather` of
/// its JSON); a rank whose bytes do not read is named.
pub fn decode<T: serde::de::DeserializeOwned>(all: &[Vec<u8>]) -> Result<Vec<T>, ClusterError> {
    all.iter()
        .enumerate()
        .map(|(rank, b)| {
            serde_json::from_slice(b).map_err(|e| ClusterError::Garbled {
                rank: rank as u32,
                reason: e.to_string(),
            })
        })
        .collect()
}

/// Whether `e` is a failure every rank agreed on (a rank's message from a
/// collective status, [`ClusterError::Rank`]), also as the disk
/// lifecycle carries it: rank 0 speaks for the job, the others have
/// nothing to add.
pub fn agreed(e: &(dyn std::error::Error + 'static)) -> bool {
    let e = match e.downcast_ref::<RunError>() {
        Some(RunError::Coordination(inner)) => &**inner,
        _ => e,
    };
    matches!(
        e.downcast_ref::<ClusterError>(),
        Some(ClusterError::Rank { .. })
    )
}

/// One rank of a disk run across ranks.
pub struct RankCoordinator<'w> {
    world: &'w World,
    layout: Layout,
    /// Whether the first rank to finish stops the others.
    stonewall: bool,
    /// Whether a profile runs (its jobs gathered one by one).
    profile: bool,
    /// The job's stop flag: raised by a signal (the caller wires it), by
    /// another rank's notice that its job failed, or under `--stonewall`
    /// by the first rank's that it finished.
    halt: Arc<AtomicBool>,
    /// Raised by a signal.
    signal: &'w AtomicBool,
    /// The common start.
    t0: Instant,
    /// The open job's start.
    open: Option<Nanos>,
    /// When this rank left the barrier before the profile's job now
    /// running: every rank's time base for the job's series.
    job_barrier: Instant,
    /// When each job started and ended, after the common start; the
    /// verify check that follows a job is not in its span.
    spans: Vec<(Nanos, Nanos)>,
    /// The other ranks' notices; taken when the run ends.
    notices: Option<Notices<'w>>,
    /// Whether another rank's finish stopped this rank's job.
    stonewalled: bool,
    /// A profile's jobs, gathered and merged as each ends.
    gather: Option<Gather<'w>>,
    /// The job's seconds, summed on rank 0 as they come.
    seconds: Seconds,
}

impl<'w> RankCoordinator<'w> {
    /// Rank `world.rank()` of a run laid out as `layout`; `profile` when a
    /// profile runs; `signal` is the stop signal's flag.
    pub fn new(
        world: &'w World,
        layout: Layout,
        stonewall: bool,
        profile: bool,
        signal: &'w AtomicBool,
    ) -> Self {
        RankCoordinator {
            world,
            layout,
            stonewall,
            profile,
            halt: Arc::new(AtomicBool::new(false)),
            signal,
            t0: Instant::now(),
            open: None,
            job_barrier: Instant::now(),
            spans: Vec::new(),
            notices: None,
            stonewalled: false,
            gather: None,
            seconds: Seconds::new(world.size()),
        }
    }

    /// The job's stop flag, for the caller to have signals raise it too.
    pub fn halt(&self) -> &Arc<AtomicBool> {
        &self.halt
    }

    fn now(&self) -> Nanos {
        Nanos(u64::try_from(self.t0.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }
}

/// A coordination failure, for the lifecycle.
fn coordination(e: ClusterError) -> RunError {
    RunError::Coordination(Box::new(e))
}

impl Coordinator for RankCoordinator<'_> {
    fn records(&self) -> bool {
        self.world.is_root()
    }

    fn knows_the_device(&self) -> bool {
        // With a path per rank, rank 0's device is not the others'.
        self.layout != Layout::PerRankPath
    }

    fn records_failed_starts(&self) -> bool {
        true
    }

    fn open(
        &mut self,
        request: &TargetRequest,
        stop: &AtomicBool,
        display: &mut dyn RunDisplay,
    ) -> Result<Option<OpenTarget>, DiskError> {
        open::open(self.world, self.layout, request, stop, display)
    }

    fn agree(
        &mut self,
        status: Result<(), String>,
    ) -> Result<(), iomark_disk::lifecycle::CoordinationError> {
        Ok(self.world.all_ok(status)?)
    }

    fn job_stop(&self) -> Option<Arc<AtomicBool>> {
        Some(Arc::clone(&self.halt))
    }

    fn start(&mut self, target: &OpenTarget) {
        self.world.barrier();
        self.t0 = Instant::now();
        self.notices = Some(self.world.notices());
        self.gather = self.profile.then(|| Gather {
            world: self.world,
            layout: self.layout,
            me: RankReport {
                // Its target's doubts; the profile's are the merged jobs'.
                warnings: target.warnings.clone(),
                ..rank_report(self.world, target)
            },
            pending: Vec::new(),
            kept: Vec::new(),
            failure: None,
        });
    }

    fn job_start(&mut self, label: &str) {
        self.seconds.job_start();
        if label == "interval" {
            return;
        }
        if let Some(g) = &self.gather {
            // Every rank starts each of a profile's jobs together; on a
            // signal the job runs no further (its stop flag is up) and
            // measured() leaves without a collective.
            g.world.barrier_unless(self.signal);
            self.job_barrier = Instant::now();
        }
        if label != "verify" {
            self.open = Some(self.now());
        }
    }

    fn job_done(&mut self) {
        if let Some(start) = self.open.take() {
            let end = self.now();
            self.spans.push((start, end));
            if let (true, Some(notices)) = (self.stonewall, self.notices.as_mut()) {
                notices.finished();
            }
        }
    }

    fn should_stop(&mut self) {
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

    fn kept(&mut self, jobs: &[DiskJobResult]) {
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
        job: Result<DiskJobResult, DiskError>,
    ) -> Result<DiskJobResult, DiskError> {
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
        if !g.world.barrier_unless(self.signal) || !self.seconds.settle(g.world, self.signal) {
            self.seconds.end(g.world);
            return Err(DiskError::Interrupted);
        }
        g.merge(job, span).map_err(|e| {
            let message = e.to_string();
            g.failure = Some(e);
            DiskError::Invalid(message)
        })
    }

    fn sample(&mut self, sample: LiveSample, counts: &LatencyCounts) -> Vec<LiveSample> {
        self.seconds.sample(self.world, sample, counts)
    }

    fn samples_ready(&mut self) -> Vec<LiveSample> {
        self.seconds.ready(self.world)
    }

    fn series(&mut self, pass: PassSeries) -> Result<SummedSeries, DiskError> {
        let Some(g) = self.gather.as_mut() else {
            return Ok(SummedSeries::alone(pass.points));
        };
        // Every rank sums the same series, so every rank finds the same
        // cliff and goes on the same way.
        if !g.world.barrier_unless(self.signal) {
            return Err(DiskError::Interrupted);
        }
        // Each rank's clock for its job started when its job got going,
        // which under load can be a second after the barrier all left
        // together: its series is placed by that delay (each rank's own
        // monotonic clock, so hosts' wall clocks play no part).
        let mine = RankSeries {
            delay: Nanos::from_duration(pass.started.saturating_duration_since(self.job_barrier)),
            points: pass.points,
        };
        let bytes = serde_json::to_vec(&mine).unwrap_or_default();
        let all = g.world.all_gather(&bytes);
        match decode::<RankSeries>(&all) {
            Ok(series) => Ok(crate::merge::merge_series(&series)),
            Err(e) => {
                let message = e.to_string();
                g.failure = Some(e);
                Err(DiskError::Invalid(message))
            }
        }
    }

    fn gather(
        &mut self,
        mut outcome: Result<DiskOutcome, RunError>,
        target: &OpenTarget,
        stop: &AtomicBool,
    ) -> Result<Gathered, RunError> {
        let mut notices = self
            .notices
            .take()
            .expect("the lifecycle starts a job before it gathers it");
        if outcome.is_err() {
            // The others stop now instead of at the end of their time; the
            // message follows in the status after the run.
            notices.failed();
        }
        if stop.load(Ordering::Relaxed) {
            // A signal: mpirun is ending the job (a rank died, or Ctrl-C).
            // No collective now, a peer may be gone: the notices' receives
            // are cancelled as they drop; the seconds are stored with the
            // shares that came.
            drop(notices);
            self.seconds.end(self.world);
            return Ok(stopped());
        }
        notices.settle();
        if !self.seconds.settle(self.world, stop) {
            return Ok(stopped());
        }
        if let (true, Ok(o)) = (self.stonewalled, outcome.as_mut()) {
            // Stopped by another rank's finish, not cut short: its figures
            // are what it managed in its time.
            o.interrupted = false;
            for j in &mut o.jobs {
                j.interrupted = false;
            }
        }
        let mut gather = self.gather.take();
        if let Some(failure) = gather.as_mut().and_then(|g| g.failure.take()) {
            // Every rank learnt of it at the same job.
            return Err(coordination(failure));
        }
        let status = outcome.as_ref().map(drop).map_err(RunError::message);
        self.world.all_ok(status).map_err(coordination)?;
        let outcome = outcome?;
        match gather {
            Some(gather) => gather.finish(outcome, stop),
            None => gather::custom(self, outcome, target),
        }
    }

    fn stopped(&mut self, target: OpenTarget, display: &mut dyn RunDisplay) {
        // The test file goes with the target, and a dead peer's in the
        // same directory with it (its lock died with it).
        let dir = (target.info.kind == TargetKind::TestFile)
            .then(|| {
                std::path::Path::new(&target.info.path)
                    .parent()
                    .map(std::path::PathBuf::from)
            })
            .flatten();
        drop(target);
        if let Some(dir) = dir {
            for p in iomark_disk::target::remove_stale_test_files(&dir).unwrap_or_default() {
                display.say(&format!(
                    "rank {}: removed {} left by a killed rank",
                    self.world.rank(),
                    p.display()
                ));
            }
        }
    }
}

/// The run stopped by a signal before the ranks' figures were gathered.
fn stopped() -> Gathered {
    Gathered::Stopped(Warning::new(
        WarningKind::Other,
        "the MPI job was stopped (a rank died, or Ctrl-C): the ranks' figures were not gathered",
    ))
}
