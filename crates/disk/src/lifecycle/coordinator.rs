//! The processes of one run: a run alone is one, an MPI job one per rank;
//! what differs between them is behind [`Coordinator`].

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use iomark_model::cluster::ClusterRun;
use iomark_model::disk::DiskJobResult;
use iomark_model::live::LiveSample;
use iomark_model::Warning;

use super::{open_target, RunDisplay, RunError};
use crate::plan::DiskOutcome;
use crate::profiles::PassSeries;
use crate::runner::LatencyCounts;
use crate::target::{OpenTarget, TargetRequest};
use crate::DiskError;
use iomark_model::sustained::SummedSeries;

/// An error of the processes' coordination (another rank failed, a rank's
/// result could not be read), as the coordinator words it.
pub type CoordinationError = Box<dyn std::error::Error + Send + Sync>;

/// What the processes' outcomes make, on this process.
// Made once per run and moved once: boxing the outcome would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Gathered {
    /// The run's outcome (merged across the processes), and how each
    /// process did when there are several: this process records it.
    Run {
        /// The run's outcome.
        outcome: DiskOutcome,
        /// The processes' table.
        cluster: Option<Box<ClusterRun>>,
    },
    /// Another process records the run.
    Elsewhere,
    /// A stop signal ended the job before the outcomes were gathered;
    /// the recording process stores the run as interrupted, with this
    /// warning and no figures.
    Stopped(Warning),
}

/// The processes of one run: a run alone is one, an MPI job one per rank.
/// What differs between them is behind [`Coordinator`]; the lifecycle calls
/// it at fixed points, so each rank goes through the same steps as a run
/// alone, in this order:
///
/// 1. [`open`](Coordinator::open) this process's target, then
///    [`agree`](Coordinator::agree) on whether every process could open and
///    check its own: one failure stops all, with its message;
/// 2. [`start`](Coordinator::start): every process starts measuring
///    together;
/// 3. while the workload runs, [`job_start`](Coordinator::job_start) and
///    [`job_done`](Coordinator::job_done) around each job,
///    [`should_stop`](Coordinator::should_stop) and
///    [`samples_ready`](Coordinator::samples_ready) at each look at its
///    progress, [`sample`](Coordinator::sample) with each second measured,
///    [`measured`](Coordinator::measured) and
///    [`series`](Coordinator::series) for what a profile makes of a job,
///    [`kept`](Coordinator::kept) when the profile keeps jobs;
/// 4. [`gather`](Coordinator::gather) the processes' outcomes into the
///    run's, on the process that [`records`](Coordinator::records) it.
///
/// A run alone ([`run`](super::run)) is one process: every step is the
/// identity.
pub trait Coordinator {
    /// Whether this process records, prints and learns from the run.
    fn records(&self) -> bool {
        true
    }
    /// Whether what is known of this process's device is the run's: not
    /// when each process has a path of its own.
    fn knows_the_device(&self) -> bool {
        true
    }
    /// Whether a run that could not start is still recorded (as failed),
    /// so that a job's launcher finds its record: a job of several
    /// processes is; a run alone that could not start is a bad input and
    /// records nothing.
    fn records_failed_starts(&self) -> bool {
        false
    }
    /// Open this process's target; `None` when a stop signal came first.
    fn open(
        &mut self,
        request: &TargetRequest,
        stop: &AtomicBool,
        display: &mut dyn RunDisplay,
    ) -> Result<Option<OpenTarget>, DiskError> {
        open_target(request, stop, display)
    }
    /// Every process's `status` of a step: an error when any failed, naming
    /// the first. Alone there is nothing to agree on: the status is the
    /// caller's to return.
    fn agree(&mut self, _status: Result<(), String>) -> Result<(), CoordinationError> {
        Ok(())
    }
    /// The flag the workload stops on, when not the stop signal's: one
    /// that the signal, another process's failure or its finish raise.
    fn job_stop(&self) -> Option<Arc<AtomicBool>> {
        None
    }
    /// Every process starts measuring on `target` together.
    fn start(&mut self, _target: &OpenTarget) {}
    /// A job or phase called `label` starts.
    fn job_start(&mut self, _label: &str) {}
    /// The current job or phase ended.
    fn job_done(&mut self) {}
    /// A look at the job's progress: raise the job's stop flag when the
    /// others say so.
    fn should_stop(&mut self) {}
    /// What a profile is to make of the job just run: alone, the job as
    /// measured; across processes, every process's merged.
    fn measured(
        &mut self,
        job: Result<DiskJobResult, DiskError>,
    ) -> Result<DiskJobResult, DiskError> {
        job
    }
    /// The bytes-written series of the job just measured: alone, as
    /// measured; across processes, summed on one time base.
    fn series(&mut self, pass: PassSeries) -> Result<SummedSeries, DiskError> {
        Ok(SummedSeries::alone(pass.points))
    }
    /// The profile kept jobs: `jobs` is every job kept so far.
    fn kept(&mut self, _jobs: &[DiskJobResult]) {}
    /// A second of this process's test just measured, and the latency
    /// counts it was cut from: the run's seconds now ready to store and
    /// show, in order. Alone, this one; across processes, the run's
    /// seconds are every process's summed, ready on the recording process
    /// once each process's share came (or its test ended).
    fn sample(&mut self, sample: LiveSample, _counts: &LatencyCounts) -> Vec<LiveSample> {
        vec![sample]
    }
    /// The run's seconds that came ready since the last look (another
    /// process's share arrived, a test ended), in order: the lifecycle
    /// looks at each look at a job's progress, after each job a profile
    /// made something of ([`measured`](Coordinator::measured)), and after
    /// [`gather`](Coordinator::gather).
    fn samples_ready(&mut self) -> Vec<LiveSample> {
        Vec::new()
    }
    /// The processes' outcomes, once the workload is over; `outcome` is
    /// this process's, `stop` the stop signal's flag.
    fn gather(
        &mut self,
        outcome: Result<DiskOutcome, RunError>,
        _target: &OpenTarget,
        _stop: &AtomicBool,
    ) -> Result<Gathered, RunError> {
        Ok(Gathered::Run {
            outcome: outcome?,
            cluster: None,
        })
    }
    /// A stop signal ended the job ([`Gathered::Stopped`]): what is left
    /// to clean once `target` is closed (a dead peer's test file).
    fn stopped(&mut self, target: OpenTarget, _display: &mut dyn RunDisplay) {
        drop(target);
    }
}

/// A run of one process.
#[derive(Debug, Default)]
pub(crate) struct Alone;

impl Coordinator for Alone {}
